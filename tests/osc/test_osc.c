/*
 * The out module's test program: conventions and frames (test_osc_convert.c), then
 * sending to Debian's oscdump (test_osc_send.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_osc.h"

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(positions_convert_by_flipping_z_only),
        cmocka_unit_test(rest_pose_facing_players_forward_is_unity_identity),
        cmocka_unit_test(rest_pose_in_our_world_faces_away_in_unity),
        cmocka_unit_test(avatar_facing_players_right_reads_yaw_plus_90_in_vrchat),
        cmocka_unit_test(raising_the_left_arm_turns_the_unity_arm_up),
        cmocka_unit_test(conversions_match_the_matrix_derivation_and_invert),
        cmocka_unit_test(unity_euler_angles_rebuild_the_rotation),
        cmocka_unit_test(vmc_frame_converts_back_to_the_pose),
        cmocka_unit_test(vmc_frame_has_every_humanoid_bone_and_upper_chest_when_present),
        cmocka_unit_test(vrchat_frame_converts_back_to_the_joints),
        cmocka_unit_test(vrchat_head_is_the_headset_when_given),
        cmocka_unit_test(destinations_parse_with_defaults),
        cmocka_unit_test(bad_destinations_are_rejected_naming_the_option),
        cmocka_unit_test(sender_rejects_bad_arguments_with_reasons),
        cmocka_unit_test_setup_teardown(vmc_stream_reaches_oscdump_with_every_bone,
                                        start_capture_fixture, stop_capture_fixture),
        cmocka_unit_test_setup_teardown(vmc_stream_carries_the_thirty_finger_bones_when_given,
                                        start_capture_fixture, stop_capture_fixture),
        cmocka_unit_test_setup_teardown(vrchat_stream_reaches_oscdump_as_nine_trackers,
                                        start_capture_fixture, stop_capture_fixture),
        cmocka_unit_test(nothing_listening_does_not_stall_and_warns_once),
        cmocka_unit_test_setup_teardown(sending_recovers_when_a_receiver_appears,
                                        start_capture_fixture, stop_capture_fixture),
        cmocka_unit_test(frames_with_non_finite_values_are_not_sent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
