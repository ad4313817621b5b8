/*
 * A VMC sender in a child process (vmc_sender.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "osc/osc.h"
#include "embody/skeleton.h"
#include "vmc_sender.h"

pid_t
vmc_sender_start(int port, const struct em_tracking_frame *frame, int sends)
{
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid > 0)
        return pid;
    struct em_error err;
    struct osc_sender *sender = NULL;
    struct sk_skeleton sk;
    struct sk_pose pose;
    if (osc_sender_create(OSC_PROTOCOL_VMC, "127.0.0.1", port, &sender, &err) != EM_OK ||
        sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err) != EM_OK ||
        sk_pose_init(&pose, &sk) != EM_OK)
        _exit(1);
    sk_pose_set_rest(&pose, &sk);
    sk_pose_forward_kinematics(&pose, &sk);
    for (int i = 0; i < sends; ++i) {
        osc_sender_set_devices(sender, frame);
        osc_sender_send(sender, &sk, &pose, i * 0.01);
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    _exit(0);
}
