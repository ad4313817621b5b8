/*
 * Not a test: the malformed-datagram suite of tests/reliability.sh. Opens a VMC input on
 * 127.0.0.1, sends it COUNT datagrams of each malformed kind (issue 20's overrunning
 * bundle, bundles timetagged in the future, nesting 40 deep, a 65,000-character serial,
 * cut messages, type tags without their data, random bytes), reading as a live source
 * does, and prints per kind what was sent, refused and taken, the process's resident
 * memory before and after, and whether a good pose still arrives afterwards.
 *
 *   vmc_flood [COUNT]      (default 20000 per kind)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "osc/osc.h"

struct packet {
    uint8_t data[70000];
    size_t size;
};

static void
put(struct packet *p, const void *b, size_t n)
{
    memcpy(p->data + p->size, b, n);
    p->size += n;
}

static void
put_u32(struct packet *p, uint32_t v)
{
    const uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(p, b, 4);
}

static void
put_string(struct packet *p, const char *s)
{
    put(p, s, strlen(s) + 1);
    while (p->size % 4)
        put(p, "", 1);
}

static void
put_pose(struct packet *p, const char *path, const char *serial, float y)
{
    put_string(p, path);
    put_string(p, ",sfffffff");
    put_string(p, serial);
    const float v[7] = {0.0f, y, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
    for (int i = 0; i < 7; ++i) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        put_u32(p, bits);
    }
}

static void
wrap_in_bundle(struct packet *p, uint64_t timetag)
{
    static struct packet inner;
    inner = *p;
    p->size = 0;
    put(p, "#bundle", 8);
    put_u32(p, (uint32_t)(timetag >> 32));
    put_u32(p, (uint32_t)timetag);
    put_u32(p, (uint32_t)inner.size);
    put(p, inner.data, inner.size);
}

enum kind { OVERRUN, FUTURE, DEEP, LONG_SERIAL, CUT, TAGS_WITHOUT_DATA, RANDOM, KIND_COUNT };
static const char *const k_kind[KIND_COUNT] = {
    "bundle element past the end (448 B)", "bundle timetagged in the future",
    "bundles nested 40 deep",              "65,000-character serial",
    "message cut mid-argument",            "type tags without their data",
    "random bytes"};

static void
build(enum kind k, int i, struct packet *p)
{
    p->size = 0;
    switch (k) {
    case OVERRUN:
        put(p, "#bundle", 8);
        put_u32(p, 0);
        put_u32(p, 1);
        for (int m = 0; m < 5; ++m) {
            static struct packet msg;
            msg.size = 0;
            put_pose(&msg, m ? "/VMC/Ext/Con/Pos" : "/VMC/Ext/Hmd/Pos", m % 2 ? "left" : "right",
                     1.0f);
            put_u32(p, (uint32_t)msg.size);
            put(p, msg.data, msg.size);
        }
        put_u32(p, (uint32_t)(448 - p->size - 4));
        put(p, "#bundle", 8);
        put_u32(p, 0);
        put_u32(p, 1);
        put_u32(p, 4096);
        while (p->size < 448)
            put(p, "/VMC", 4);
        break;
    case FUTURE:
        put_pose(p, "/VMC/Ext/Hmd/Pos", "hmd", 1.0f + (float)(i % 100) * 0.001f);
        wrap_in_bundle(p, UINT64_C(0xfffffff000000000));
        break;
    case DEEP:
        put_pose(p, "/VMC/Ext/Hmd/Pos", "hmd", 1.0f);
        for (int d = 0; d < 40; ++d)
            wrap_in_bundle(p, 1);
        break;
    case LONG_SERIAL: {
        static char serial[65001];
        memset(serial, 'A' + i % 26, sizeof serial - 1);
        put_pose(p, "/VMC/Ext/Tra/Pos", serial, 1.0f);
        break;
    }
    case CUT:
        put_pose(p, "/VMC/Ext/Hmd/Pos", "hmd", 1.0f);
        p->size -= 4 + (size_t)(i % 6) * 4;
        break;
    case TAGS_WITHOUT_DATA:
        put_string(p, "/VMC/Ext/Hmd/Pos");
        put_string(p, ",sfffffffbbbbs");
        put_string(p, "hmd");
        break;
    case RANDOM:
        p->size = 4 + (size_t)(rand() % 512);
        for (size_t b = 0; b < p->size; ++b)
            p->data[b] = (uint8_t)rand();
        if (i % 2)
            memcpy(p->data, "#bundle", 8);
        break;
    case KIND_COUNT: break;
    }
}

static long
rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void
drain(struct in_source *src)
{
    struct em_tracking_frame f;
    while (in_source_next(src, &f) == EM_OK) {
    }
}

int
main(int argc, char **argv)
{
    const int count = argc > 1 ? atoi(argv[1]) : 20000;
    const int port = 45000 + (int)(getpid() % 5000);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = NULL;
    struct em_error err;
    if (osc_vmc_in_create(&desc, &src, &err) != EM_OK) {
        fprintf(stderr, "vmc_flood: %s\n", err.message);
        return 1;
    }
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static struct packet p;
    srand(20);
    drain(src);
    const long rss_start = rss_kb();
    printf("| datagram kind | sent | refused whole | messages refused | poses taken | RSS before, kB | RSS after, kB |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < KIND_COUNT; ++k) {
        struct osc_vmc_in_stats before, after;
        osc_vmc_in_get_stats(src, &before);
        const long rss_before = rss_kb();
        /* 65 kB datagrams: a tenth as many, read two at a time (the socket holds ~3). */
        const int n = k == LONG_SERIAL ? (count + 9) / 10 : count;
        for (int i = 0; i < n; ++i) {
            build((enum kind)k, i, &p);
            sendto(fd, p.data, p.size, 0, (const struct sockaddr *)&to, sizeof to);
            if (i % (k == LONG_SERIAL ? 2 : 64) == 63 || k == LONG_SERIAL)
                drain(src);
        }
        drain(src);
        osc_vmc_in_get_stats(src, &after);
        printf("| %s | %d | %llu | %llu | %llu | %ld | %ld |\n", k_kind[k], n,
               (unsigned long long)(after.malformed - before.malformed),
               (unsigned long long)(after.bad + after.unmapped - before.bad - before.unmapped),
               (unsigned long long)(after.poses - before.poses), rss_before, rss_kb());
    }
    /* Recovery: a good headset pose after all that. */
    p.size = 0;
    put_pose(&p, "/VMC/Ext/Hmd/Pos", "hmd", 1.7f);
    sendto(fd, p.data, p.size, 0, (const struct sockaddr *)&to, sizeof to);
    struct em_tracking_frame f;
    bool recovered = false;
    for (int i = 0; i < 20 && !recovered; ++i)
        recovered = in_source_next(src, &f) == EM_OK &&
                    em_device_pose_usable(&f.device[EM_DEVICE_HEAD]) &&
                    f.device[EM_DEVICE_HEAD].pose.position_m[1] == 1.7f;
    printf("\nRSS at the start %ld kB, at the end %ld kB; a good pose afterwards: %s\n", rss_start,
           rss_kb(), recovered ? "taken" : "NOT taken");
    close(fd);
    in_source_destroy(&src);
    return recovered ? 0 : 1;
}
