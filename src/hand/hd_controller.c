/*
 * Fingers from controllers (include/embody/hand.h): which finger inputs each OpenXR
 * interaction profile has, and the curls they say.
 *
 * The table is the profiles' input paths in the OpenXR specification (section 6.4,
 * "Interaction Profile Paths", and the extensions that add profiles): only what bears on
 * the fingers. What players expect comes from SteamVR's skeletal input: the index finger
 * follows the trigger and straightens to point when its sensor says it left the trigger;
 * the three other fingers follow the grip; the thumb lies on the controller while a thumb
 * sensor is touched and stands up when none is.
 */
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "hand/hd_internal.h"

static const struct hd_profile profiles[] = {
    {"/interaction_profiles/khr/simple_controller", "Khronos simple controller",
     HD_IN_SELECT_CLICK},
    /* Index's per-finger curls are not claimed: no core path gives them (SteamVR gives
     * Index's fingers as XR_EXT_hand_tracking's joints, which come first). A profile that
     * claimed them read zeros: Index's fingers straight whatever the grip
     * (tests/xr/test_xr_hands checks every input read here is bound). */
    {"/interaction_profiles/valve/index_controller", "Valve Index",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_SQUEEZE_VALUE | HD_IN_SQUEEZE_FORCE |
         HD_IN_THUMBSTICK_TOUCH | HD_IN_TRACKPAD_TOUCH | HD_IN_BUTTONS_TOUCH},
    {"/interaction_profiles/oculus/touch_controller", "Oculus Touch",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_SQUEEZE_VALUE | HD_IN_THUMBSTICK_TOUCH |
         HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/meta/touch_pro_controller", "Meta Quest Touch Pro",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_TRIGGER_CURL | HD_IN_SQUEEZE_VALUE |
         HD_IN_THUMBSTICK_TOUCH | HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/meta/touch_plus_controller", "Meta Quest Touch Plus",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_TRIGGER_CURL | HD_IN_SQUEEZE_VALUE |
         HD_IN_THUMBSTICK_TOUCH | HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/bytedance/pico4_controller", "PICO 4",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_SQUEEZE_VALUE | HD_IN_THUMBSTICK_TOUCH |
         HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/bytedance/pico_neo3_controller", "PICO Neo3",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_SQUEEZE_VALUE | HD_IN_THUMBSTICK_TOUCH |
         HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/htc/vive_controller", "HTC Vive wand",
     HD_IN_TRIGGER_VALUE | HD_IN_SQUEEZE_CLICK | HD_IN_TRACKPAD_TOUCH},
    {"/interaction_profiles/htc/vive_cosmos_controller", "HTC Vive Cosmos",
     HD_IN_TRIGGER_VALUE | HD_IN_SQUEEZE_CLICK | HD_IN_THUMBSTICK_TOUCH},
    {"/interaction_profiles/htc/vive_focus3_controller", "HTC Vive Focus 3",
     HD_IN_TRIGGER_VALUE | HD_IN_TRIGGER_TOUCH | HD_IN_SQUEEZE_VALUE | HD_IN_THUMBSTICK_TOUCH |
         HD_IN_THUMBREST_TOUCH},
    {"/interaction_profiles/microsoft/motion_controller", "Windows Mixed Reality",
     HD_IN_TRIGGER_VALUE | HD_IN_SQUEEZE_CLICK | HD_IN_TRACKPAD_TOUCH},
    {"/interaction_profiles/hp/mixed_reality_controller", "HP Reverb G2",
     HD_IN_TRIGGER_VALUE | HD_IN_SQUEEZE_VALUE},
    {"/interaction_profiles/samsung/odyssey_controller", "Samsung Odyssey",
     HD_IN_TRIGGER_VALUE | HD_IN_SQUEEZE_CLICK | HD_IN_TRACKPAD_TOUCH},
    {"/interaction_profiles/huawei/controller", "Huawei controller",
     HD_IN_TRIGGER_VALUE | HD_IN_TRACKPAD_TOUCH},
};

#define PROFILE_COUNT ((int)(sizeof profiles / sizeof profiles[0]))

/* The thumb resting on the controller, and the index finger on the trigger untouched. */
#define THUMB_ON_CONTROLLER 0.5f
#define INDEX_ON_TRIGGER 0.35f
/* How far the fingers spread in an open hand (sensors, nothing touched or pressed). */
#define OPEN_SPLAY 0.6f

const struct hd_profile *
hd_profile_find(const char *path)
{
    if (!path)
        return NULL;
    for (int i = 0; i < PROFILE_COUNT; ++i)
        if (strcmp(profiles[i].path, path) == 0)
            return &profiles[i];
    return NULL;
}

int
hd_profile_count(void)
{
    return PROFILE_COUNT;
}

const struct hd_profile *
hd_profile_at(int index)
{
    return index >= 0 && index < PROFILE_COUNT ? &profiles[index] : NULL;
}

static float
unit(float v)
{
    return isfinite(v) ? m_clampf(v, 0.0f, 1.0f) : 0.0f;
}

/* How closed the hand's grip is: the squeeze in whatever form the profile has it. */
static float
grip(uint32_t inputs, const struct hd_controller_input *in)
{
    float g = 0.0f;
    if (inputs & (HD_IN_SQUEEZE_VALUE | HD_IN_SQUEEZE_CLICK))
        g = unit(in->squeeze);
    if (inputs & HD_IN_SQUEEZE_FORCE)
        g = fmaxf(g, unit(in->squeeze_force));
    return g;
}

static float
index_curl(uint32_t inputs, const struct hd_controller_input *in, float relaxed)
{
    const float trigger = unit(in->trigger);
    if (inputs & HD_IN_TRIGGER_TOUCH) {
        if (in->trigger_touch || trigger > 0.0f)
            return INDEX_ON_TRIGGER + (1.0f - INDEX_ON_TRIGGER) * trigger;
        /* Off the trigger: straight, or as far as the curl sensor says it hovers. */
        return inputs & HD_IN_TRIGGER_CURL ? INDEX_ON_TRIGGER * (1.0f - unit(in->trigger_curl))
                                           : 0.0f;
    }
    if (inputs & (HD_IN_TRIGGER_VALUE | HD_IN_SELECT_CLICK))
        return relaxed + (1.0f - relaxed) * trigger;
    return relaxed;
}

void
hd_curls_from_controller(const struct hd_profile *profile, const struct hd_controller_input *in,
                         struct hd_curls *out_curls)
{
    struct hd_curls relaxed;
    hd_curls_relaxed(&relaxed);
    *out_curls = relaxed;
    if (!profile)
        return;
    const uint32_t inputs = profile->inputs;
    const bool senses_thumb = (inputs & HD_IN_THUMB_TOUCHES) != 0;
    const bool thumb_on = ((inputs & HD_IN_THUMBSTICK_TOUCH) && in->thumbstick_touch) ||
                          ((inputs & HD_IN_TRACKPAD_TOUCH) && in->trackpad_touch) ||
                          ((inputs & HD_IN_BUTTONS_TOUCH) && in->buttons_touch) ||
                          ((inputs & HD_IN_THUMBREST_TOUCH) && in->thumbrest_touch);
    const float g = grip(inputs, in);
    /* With touch sensors a hand that touches nothing is open; without, nothing is known. */
    const bool senses_touch = senses_thumb || (inputs & HD_IN_TRIGGER_TOUCH);
    const float rest_of_hand = senses_touch ? 0.0f : 1.0f;

    if (inputs & HD_IN_FINGER_CURL) {
        for (int f = HD_INDEX; f <= HD_LITTLE; ++f)
            out_curls->curl[f] = unit(in->finger_curl[f]);
    } else {
        out_curls->curl[HD_INDEX] = index_curl(inputs, in, relaxed.curl[HD_INDEX]);
        for (int f = HD_MIDDLE; f <= HD_LITTLE; ++f) {
            const float open = rest_of_hand * relaxed.curl[f];
            out_curls->curl[f] = open + (1.0f - open) * g;
        }
    }
    if (senses_thumb)
        out_curls->curl[HD_THUMB] = thumb_on ? THUMB_ON_CONTROLLER : 0.0f;
    else
        out_curls->curl[HD_THUMB] =
            relaxed.curl[HD_THUMB] + (THUMB_ON_CONTROLLER - relaxed.curl[HD_THUMB]) * g;
    /* Fingers spread as the hand opens; a hand with sensors touching nothing spreads. */
    float closed = 0.0f;
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        closed = fmaxf(closed, out_curls->curl[f]);
    const float open_splay = senses_touch ? OPEN_SPLAY : relaxed.splay;
    out_curls->splay = open_splay * (1.0f - closed);
}
