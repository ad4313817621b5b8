/* Solves a two-bone arm (shoulder, elbow, wrist) so that the wrist reaches a target, with
 * embody's FABRIK solver. Build against the installed library:
 *   cc solve_arm.c $(pkg-config --cflags --libs embody) -o solve_arm */
#include <stdio.h>

#include <embody/ik.h>

int
main(void)
{
    const struct sk_joint_desc arm[] = {
        {.name = "shoulder", .offset_m = {0.0f, 1.4f, 0.0f}}, /* the root: where it stands */
        {.name = "elbow", .parent = "shoulder", .offset_m = {0.30f, 0.0f, 0.0f}},
        {.name = "wrist", .parent = "elbow", .offset_m = {0.25f, 0.0f, 0.0f}},
    };
    struct sk_skeleton skeleton;
    struct sk_pose pose;
    struct ik_solver *solver = NULL;
    struct em_error err = {"out of memory"}; /* sk_pose_init fails only for want of memory */
    if (sk_skeleton_create(arm, 3, "arm", &skeleton, &err) != EM_OK ||
        sk_pose_init(&pose, &skeleton) != EM_OK) {
        fprintf(stderr, "solve_arm: %s\n", err.message);
        return 1;
    }
    struct ik_solver_desc desc = {.skeleton = &skeleton, .effector_count = 1};
    desc.effector[0].joint = 2; /* the wrist */
    if (ik_solver_create(&desc, &solver, &err) != EM_OK) {
        fprintf(stderr, "solve_arm: %s\n", err.message);
        return 1;
    }
    const float target_m[3] = {0.25f, 1.1f, 0.3f};
    struct ik_stats stats;
    ik_solver_set_target(solver, 0, target_m, NULL);
    ik_solver_solve(solver, &pose, &stats);
    for (int j = 0; j < skeleton.joint_count; ++j)
        printf("%-8s %7.3f %7.3f %7.3f\n", skeleton.name[j], (double)pose.position_m[j][0],
               (double)pose.position_m[j][1], (double)pose.position_m[j][2]);
    printf("reached the target within %.1f mm in %d iterations\n",
           1000.0 * (double)stats.max_residual_m, stats.iterations);
    ik_solver_destroy(&solver);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&skeleton);
    return stats.converged ? 0 : 1;
}
