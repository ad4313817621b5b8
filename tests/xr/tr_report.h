/*
 * What the test OpenXR runtime (tests/xr/runtime) saw the application do, for the tests
 * to check: counters, the last projection layer, the bindings it accepted, and every
 * specification violation it caught (each of which also failed the call).
 *
 * The runtime is loaded by the Khronos loader; a test reaches this report by opening the
 * same library again with dlopen(RTLD_NOLOAD) and looking up TR_REPORT_FUNCTION. The
 * report starts afresh whenever the runtime loads a different script.
 */
#ifndef EMBODY_TR_REPORT_H
#define EMBODY_TR_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#define TR_REPORT_FUNCTION "embody_test_runtime_report"
#define TR_REPORT_MAX_MESSAGES 16
#define TR_REPORT_MAX_PROFILES 8
#define TR_REPORT_TEXT 256

struct tr_report_layer {
    int view_count;
    int32_t width[2];
    int32_t height[2];
    int64_t format[2];        /* of the swapchains the views use */
    uint8_t center_rgba[2][4]; /* the middle pixel of the image released for each view */
    bool views_as_located;    /* poses and fields of view are those xrLocateViews gave */
};

struct tr_report {
    char script[TR_REPORT_TEXT];
    int instances_created;
    int sessions_created;
    int sessions_begun;
    int sessions_ended;
    int frames_waited;
    int frames_ended;
    int projection_layers; /* frames ended with a (valid) projection layer */
    int empty_frames;      /* frames ended with no layer */
    int locates_off_frame_time; /* poses located at another time than the frame's */
    int swapchains_created;
    int action_sets_created; /* by the application and the layers between */
    struct tr_report_layer layer; /* the last projection layer */
    int profiles_accepted_count;
    char profiles_accepted[TR_REPORT_MAX_PROFILES][TR_REPORT_TEXT];
    int violation_count;
    char violations[TR_REPORT_MAX_MESSAGES][TR_REPORT_TEXT];
};

typedef const struct tr_report *(*tr_report_fn)(void);

#endif
