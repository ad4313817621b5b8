/*
 * Benchmark: how long osc_sender_send takes per frame (convert, encode with liblo, send),
 * for VMC and VRChat, to a port where a receiver listens and to one where nothing does
 * (every send then meets ECONNREFUSED). Prints a table; asserts nothing about speed.
 *
 *     bench_osc [FRAMES]     (default 2000)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "embody/m_math.h"
#include "osc/osc.h"
#include "oscdump_capture.h"
#include "util/u_log.h"

static double
now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A receiver: a bound UDP socket on loopback, drained between frames (outside timing). */
static int
open_receiver(int *out_port)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("bench_osc: receiver");
        exit(1);
    }
    *out_port = ntohs(a.sin_port);
    return fd;
}

static void
drain(int fd)
{
    char buf[2048];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
}

static void
bench(enum osc_protocol protocol, bool listening, const struct sk_skeleton *sk,
      struct sk_pose *pose, int frames, double *samples)
{
    int port, receiver = -1;
    if (listening)
        receiver = open_receiver(&port);
    else
        port = oscdump_free_udp_port();
    struct osc_sender *s = NULL;
    struct em_error err;
    if (osc_sender_create(protocol, "127.0.0.1", port, &s, &err) != EM_OK) {
        fprintf(stderr, "bench_osc: %s\n", err.message);
        exit(1);
    }
    const float up[3] = {0, 1, 0};
    for (int f = 0; f < frames; ++f) {
        /* A moving pose, so every frame's values differ. */
        m_quat_from_axis_angle(up, 0.01f * (float)f, pose->local_rotation[0]);
        sk_pose_forward_kinematics(pose, sk);
        const double t0 = now_us();
        osc_sender_send(s, sk, pose, f / 90.0);
        samples[f] = now_us() - t0;
        if (receiver >= 0)
            drain(receiver);
    }
    struct osc_sender_stats st;
    osc_sender_get_stats(s, &st);
    qsort(samples, (size_t)frames, sizeof *samples, compare_double);
    printf("%-11s %-14s %7d %10.1f %8.1f %8.1f %10llu %8llu\n", osc_protocol_name(protocol),
           listening ? "listening" : "nothing there", frames, samples[frames / 2],
           samples[(frames * 99) / 100], samples[frames - 1],
           (unsigned long long)st.datagrams_sent, (unsigned long long)st.datagrams_failed);
    osc_sender_destroy(&s);
    if (receiver >= 0)
        close(receiver);
}

int
main(int argc, char **argv)
{
    const int frames = argc > 1 ? atoi(argv[1]) : 2000;
    if (frames < 10) {
        fprintf(stderr, "usage: bench_osc [FRAMES >= 10]\n");
        return 2;
    }
    struct sk_skeleton sk;
    struct sk_pose pose;
    struct em_error err;
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err) != EM_OK ||
        sk_pose_init(&pose, &sk) != EM_OK) {
        fprintf(stderr, "bench_osc: %s\n", err.message);
        return 1;
    }
    u_log_set_level(U_LOG_ERROR); /* the one expected "fails" warning would clutter the table */
    double *samples = calloc((size_t)frames, sizeof *samples);
    if (!samples)
        return 1;
    printf("osc_sender_send, microseconds per frame (humanoid, %d joints)\n", sk.joint_count);
    printf("%-11s %-14s %7s %10s %8s %8s %10s %8s\n", "protocol", "destination", "frames",
           "median_us", "p99_us", "max_us", "datagrams", "failed");
    bench(OSC_PROTOCOL_VMC, true, &sk, &pose, frames, samples);
    bench(OSC_PROTOCOL_VMC, false, &sk, &pose, frames, samples);
    bench(OSC_PROTOCOL_VRCHAT, true, &sk, &pose, frames, samples);
    bench(OSC_PROTOCOL_VRCHAT, false, &sk, &pose, frames, samples);
    free(samples);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    return 0;
}
