/* The program's own part of the settings file (app_settings.h). */
#include "app/app_settings.h"
#include "util/u_text.h"

enum em_result
app_settings_faults(const char *path, struct flt_set *set, struct em_error *err)
{
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    r = flt_settings_parse(text.data, path, set, err);
    u_text_fini(&text);
    return r;
}
