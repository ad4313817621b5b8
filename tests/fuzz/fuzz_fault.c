/* libFuzzer target: the fault reader (flt_set_add, one fault per line), and the faults it
 * accepts applied to a few frames, so no accepted amount breaks the per-frame step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault/fault.h"
#include "fuzz_common.h"

#define FRAMES 8

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct flt_set set = {.seed = size};
    struct em_error err;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        flt_set_add(&set, line, "--fault", &err);
    static struct em_tracking_frame frames[FRAMES];
    memset(frames, 0, sizeof frames);
    for (int i = 0; i < FRAMES; ++i) {
        frames[i].time_s = i * 0.5;
        frames[i].tracker_present = EM_TRACKER_ALL;
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            frames[i].device[d].pose.orientation[3] = 1.0f;
            frames[i].device[d].flags = EM_POSE_ALL_VALID;
        }
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
            frames[i].tracker[t].pose.orientation[3] = 1.0f;
            frames[i].tracker[t].flags = EM_POSE_ALL_VALID;
        }
    }
    flt_apply_frames(&set, frames, FRAMES, &err);
    free(text);
    return 0;
}
