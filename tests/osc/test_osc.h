/*
 * The out module's tests, in two files (conventions and frames; sending to a real
 * receiver), run by one executable (test_osc.c).
 */
#ifndef EMBODY_TESTS_TEST_OSC_H
#define EMBODY_TESTS_TEST_OSC_H

#include "osc/osc.h"

/* test_osc_convert.c */
void positions_convert_by_flipping_z_only(void **state);
void rest_pose_facing_players_forward_is_unity_identity(void **state);
void rest_pose_in_our_world_faces_away_in_unity(void **state);
void avatar_facing_players_right_reads_yaw_plus_90_in_vrchat(void **state);
void raising_the_left_arm_turns_the_unity_arm_up(void **state);
void conversions_match_the_matrix_derivation_and_invert(void **state);
void unity_euler_angles_rebuild_the_rotation(void **state);
void vmc_frame_converts_back_to_the_pose(void **state);
void vmc_frame_has_every_humanoid_bone_and_upper_chest_when_present(void **state);
void vrchat_frame_converts_back_to_the_joints(void **state);
void vrchat_head_is_the_headset_when_given(void **state);
void destinations_parse_with_defaults(void **state);
void bad_destinations_are_rejected_naming_the_option(void **state);
void sender_rejects_bad_arguments_with_reasons(void **state);

/* Shared checks (test_osc_convert.c), also used on what oscdump received. */
void check_vmc_values_against_pose(const struct sk_skeleton *sk, const struct sk_pose *pose,
                                   const struct osc_vmc_frame *f, double local_tol,
                                   double global_tol);
void check_vrchat_values_against_pose(const struct sk_skeleton *sk, const struct sk_pose *pose,
                                      const char *address, const float *position_unity,
                                      const float *euler_deg, double tol);

/* test_osc_send.c */
int start_capture_fixture(void **state);
int stop_capture_fixture(void **state);
void vmc_stream_reaches_oscdump_with_every_bone(void **state);
void vmc_stream_carries_the_thirty_finger_bones_when_given(void **state);
void vrchat_stream_reaches_oscdump_as_nine_trackers(void **state);
void nothing_listening_does_not_stall_and_warns_once(void **state);
void sending_recovers_when_a_receiver_appears(void **state);
void frames_with_non_finite_values_are_not_sent(void **state);

#endif
