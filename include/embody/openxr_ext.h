/*
 * What Debian's OpenXR SDK (1.0.20) lacks and the API layer (src/layer/) and its tests
 * need, declared from the specifications (written here, not copied):
 *
 *   - the loader's API layer interface: OpenXR Loader design document ("API Layer
 *     Interaction": the negotiation, xrCreateApiLayerInstance and the next-info chain),
 *     with the types and values of the registry (xr.xml, "openxr_loader_negotiation.h");
 *   - XR_FB_body_tracking (spec version 1; OpenXR specification chapter 12, extension
 *     number 77: structure types 1000076001..1000076006, object type 1000076000);
 *   - XR_META_body_tracking_full_body (spec version 1; extension number 275: structure
 *     type and joint set 1000274000);
 *   - XR_BD_body_tracking (spec version 1; extension number 386: object type 1000385000,
 *     structure types 1000385001..1000385004).
 *
 * Each part is skipped when the OpenXR headers in use already declare it (a newer SDK),
 * so this header and a newer openxr.h can be included together. Layouts and values are the
 * registry's; an application built against this header talks to any runtime that
 * implements the extensions.
 */
#ifndef EMBODY_OPENXR_EXT_H
#define EMBODY_OPENXR_EXT_H

#include <stddef.h>
#include <stdint.h>

#include <openxr/openxr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Loader <-> API layer interface (loader design document) ----------------------- */

#if !defined(OPENXR_LOADER_NEGOTIATION_H_) && !defined(XR_CURRENT_LOADER_API_LAYER_VERSION)

#define XR_CURRENT_LOADER_API_LAYER_VERSION 1
#define XR_LOADER_INFO_STRUCT_VERSION 1
#define XR_API_LAYER_INFO_STRUCT_VERSION 1
#define XR_API_LAYER_NEXT_INFO_STRUCT_VERSION 1
#define XR_API_LAYER_CREATE_INFO_STRUCT_VERSION 1
#define XR_API_LAYER_MAX_SETTINGS_PATH_SIZE 512

typedef enum XrLoaderInterfaceStructs {
    XR_LOADER_INTERFACE_STRUCT_UNINTIALIZED = 0, /* sic: the registry's spelling */
    XR_LOADER_INTERFACE_STRUCT_LOADER_INFO = 1,
    XR_LOADER_INTERFACE_STRUCT_API_LAYER_REQUEST = 2,
    XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST = 3,
    XR_LOADER_INTERFACE_STRUCT_API_LAYER_CREATE_INFO = 4,
    XR_LOADER_INTERFACE_STRUCT_API_LAYER_NEXT_INFO = 5,
    XR_LOADER_INTERFACE_STRUCTS_MAX_ENUM = 0x7FFFFFFF
} XrLoaderInterfaceStructs;

/* What the loader supports, given to xrNegotiateLoaderApiLayerInterface. */
typedef struct XrNegotiateLoaderInfo {
    XrLoaderInterfaceStructs structType; /* LOADER_INFO */
    uint32_t structVersion;              /* XR_LOADER_INFO_STRUCT_VERSION */
    size_t structSize;
    uint32_t minInterfaceVersion;
    uint32_t maxInterfaceVersion;
    XrVersion minApiVersion;
    XrVersion maxApiVersion;
} XrNegotiateLoaderInfo;

typedef struct XrApiLayerCreateInfo XrApiLayerCreateInfo;
typedef XrResult(XRAPI_PTR *PFN_xrCreateApiLayerInstance)(const XrInstanceCreateInfo *info,
                                                          const XrApiLayerCreateInfo *apiLayerInfo,
                                                          XrInstance *instance);

/* What the layer answers. */
typedef struct XrNegotiateApiLayerRequest {
    XrLoaderInterfaceStructs structType; /* API_LAYER_REQUEST */
    uint32_t structVersion;              /* XR_API_LAYER_INFO_STRUCT_VERSION */
    size_t structSize;
    uint32_t layerInterfaceVersion;
    XrVersion layerApiVersion;
    PFN_xrGetInstanceProcAddr getInstanceProcAddr;
    PFN_xrCreateApiLayerInstance createApiLayerInstance;
} XrNegotiateApiLayerRequest;

/* One element of the chain below a layer: the next layer (or the runtime). */
typedef struct XrApiLayerNextInfo {
    XrLoaderInterfaceStructs structType; /* API_LAYER_NEXT_INFO */
    uint32_t structVersion;              /* XR_API_LAYER_NEXT_INFO_STRUCT_VERSION */
    size_t structSize;
    char layerName[XR_MAX_API_LAYER_NAME_SIZE];
    PFN_xrGetInstanceProcAddr nextGetInstanceProcAddr;
    PFN_xrCreateApiLayerInstance nextCreateApiLayerInstance;
    struct XrApiLayerNextInfo *next;
} XrApiLayerNextInfo;

struct XrApiLayerCreateInfo {
    XrLoaderInterfaceStructs structType; /* API_LAYER_CREATE_INFO */
    uint32_t structVersion;              /* XR_API_LAYER_CREATE_INFO_STRUCT_VERSION */
    size_t structSize;
    void *loaderInstance;
    char settings_file_location[XR_API_LAYER_MAX_SETTINGS_PATH_SIZE];
    XrApiLayerNextInfo *nextInfo; /* this layer's element; its `next` is for the layer below */
};

typedef XrResult(XRAPI_PTR *PFN_xrNegotiateLoaderApiLayerInterface)(
    const XrNegotiateLoaderInfo *loaderInfo, const char *layerName,
    XrNegotiateApiLayerRequest *apiLayerRequest);

#endif /* loader interface */

/* ---- XR_FB_body_tracking ------------------------------------------------------------ */

#ifndef XR_FB_body_tracking
#define XR_FB_body_tracking 1
#define XR_FB_body_tracking_SPEC_VERSION 1
#define XR_FB_BODY_TRACKING_EXTENSION_NAME "XR_FB_body_tracking"

XR_DEFINE_HANDLE(XrBodyTrackerFB)

#define XR_OBJECT_TYPE_BODY_TRACKER_FB ((XrObjectType)1000076000)
#define XR_TYPE_BODY_TRACKER_CREATE_INFO_FB ((XrStructureType)1000076001)
#define XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB ((XrStructureType)1000076002)
#define XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_FB ((XrStructureType)1000076004)
#define XR_TYPE_BODY_JOINT_LOCATIONS_FB ((XrStructureType)1000076005)
#define XR_TYPE_BODY_SKELETON_FB ((XrStructureType)1000076006)

/* The joints of XR_BODY_JOINT_SET_DEFAULT_FB, in the registry's order. */
typedef enum XrBodyJointFB {
    XR_BODY_JOINT_ROOT_FB = 0,
    XR_BODY_JOINT_HIPS_FB = 1,
    XR_BODY_JOINT_SPINE_LOWER_FB = 2,
    XR_BODY_JOINT_SPINE_MIDDLE_FB = 3,
    XR_BODY_JOINT_SPINE_UPPER_FB = 4,
    XR_BODY_JOINT_CHEST_FB = 5,
    XR_BODY_JOINT_NECK_FB = 6,
    XR_BODY_JOINT_HEAD_FB = 7,
    XR_BODY_JOINT_LEFT_SHOULDER_FB = 8,
    XR_BODY_JOINT_LEFT_SCAPULA_FB = 9,
    XR_BODY_JOINT_LEFT_ARM_UPPER_FB = 10,
    XR_BODY_JOINT_LEFT_ARM_LOWER_FB = 11,
    XR_BODY_JOINT_LEFT_HAND_WRIST_TWIST_FB = 12,
    XR_BODY_JOINT_RIGHT_SHOULDER_FB = 13,
    XR_BODY_JOINT_RIGHT_SCAPULA_FB = 14,
    XR_BODY_JOINT_RIGHT_ARM_UPPER_FB = 15,
    XR_BODY_JOINT_RIGHT_ARM_LOWER_FB = 16,
    XR_BODY_JOINT_RIGHT_HAND_WRIST_TWIST_FB = 17,
    /* Each hand: palm, wrist, thumb (metacarpal, proximal, distal, tip), then index,
     * middle, ring and little (metacarpal, proximal, intermediate, distal, tip). */
    XR_BODY_JOINT_LEFT_HAND_PALM_FB = 18,
    XR_BODY_JOINT_LEFT_HAND_WRIST_FB = 19,
    XR_BODY_JOINT_LEFT_HAND_THUMB_METACARPAL_FB = 20,
    XR_BODY_JOINT_LEFT_HAND_THUMB_PROXIMAL_FB = 21,
    XR_BODY_JOINT_LEFT_HAND_THUMB_DISTAL_FB = 22,
    XR_BODY_JOINT_LEFT_HAND_THUMB_TIP_FB = 23,
    XR_BODY_JOINT_LEFT_HAND_INDEX_METACARPAL_FB = 24,
    XR_BODY_JOINT_LEFT_HAND_INDEX_PROXIMAL_FB = 25,
    XR_BODY_JOINT_LEFT_HAND_INDEX_INTERMEDIATE_FB = 26,
    XR_BODY_JOINT_LEFT_HAND_INDEX_DISTAL_FB = 27,
    XR_BODY_JOINT_LEFT_HAND_INDEX_TIP_FB = 28,
    XR_BODY_JOINT_LEFT_HAND_MIDDLE_METACARPAL_FB = 29,
    XR_BODY_JOINT_LEFT_HAND_MIDDLE_PROXIMAL_FB = 30,
    XR_BODY_JOINT_LEFT_HAND_MIDDLE_INTERMEDIATE_FB = 31,
    XR_BODY_JOINT_LEFT_HAND_MIDDLE_DISTAL_FB = 32,
    XR_BODY_JOINT_LEFT_HAND_MIDDLE_TIP_FB = 33,
    XR_BODY_JOINT_LEFT_HAND_RING_METACARPAL_FB = 34,
    XR_BODY_JOINT_LEFT_HAND_RING_PROXIMAL_FB = 35,
    XR_BODY_JOINT_LEFT_HAND_RING_INTERMEDIATE_FB = 36,
    XR_BODY_JOINT_LEFT_HAND_RING_DISTAL_FB = 37,
    XR_BODY_JOINT_LEFT_HAND_RING_TIP_FB = 38,
    XR_BODY_JOINT_LEFT_HAND_LITTLE_METACARPAL_FB = 39,
    XR_BODY_JOINT_LEFT_HAND_LITTLE_PROXIMAL_FB = 40,
    XR_BODY_JOINT_LEFT_HAND_LITTLE_INTERMEDIATE_FB = 41,
    XR_BODY_JOINT_LEFT_HAND_LITTLE_DISTAL_FB = 42,
    XR_BODY_JOINT_LEFT_HAND_LITTLE_TIP_FB = 43,
    XR_BODY_JOINT_RIGHT_HAND_PALM_FB = 44,
    XR_BODY_JOINT_RIGHT_HAND_WRIST_FB = 45,
    XR_BODY_JOINT_RIGHT_HAND_THUMB_METACARPAL_FB = 46,
    XR_BODY_JOINT_RIGHT_HAND_THUMB_PROXIMAL_FB = 47,
    XR_BODY_JOINT_RIGHT_HAND_THUMB_DISTAL_FB = 48,
    XR_BODY_JOINT_RIGHT_HAND_THUMB_TIP_FB = 49,
    XR_BODY_JOINT_RIGHT_HAND_INDEX_METACARPAL_FB = 50,
    XR_BODY_JOINT_RIGHT_HAND_INDEX_PROXIMAL_FB = 51,
    XR_BODY_JOINT_RIGHT_HAND_INDEX_INTERMEDIATE_FB = 52,
    XR_BODY_JOINT_RIGHT_HAND_INDEX_DISTAL_FB = 53,
    XR_BODY_JOINT_RIGHT_HAND_INDEX_TIP_FB = 54,
    XR_BODY_JOINT_RIGHT_HAND_MIDDLE_METACARPAL_FB = 55,
    XR_BODY_JOINT_RIGHT_HAND_MIDDLE_PROXIMAL_FB = 56,
    XR_BODY_JOINT_RIGHT_HAND_MIDDLE_INTERMEDIATE_FB = 57,
    XR_BODY_JOINT_RIGHT_HAND_MIDDLE_DISTAL_FB = 58,
    XR_BODY_JOINT_RIGHT_HAND_MIDDLE_TIP_FB = 59,
    XR_BODY_JOINT_RIGHT_HAND_RING_METACARPAL_FB = 60,
    XR_BODY_JOINT_RIGHT_HAND_RING_PROXIMAL_FB = 61,
    XR_BODY_JOINT_RIGHT_HAND_RING_INTERMEDIATE_FB = 62,
    XR_BODY_JOINT_RIGHT_HAND_RING_DISTAL_FB = 63,
    XR_BODY_JOINT_RIGHT_HAND_RING_TIP_FB = 64,
    XR_BODY_JOINT_RIGHT_HAND_LITTLE_METACARPAL_FB = 65,
    XR_BODY_JOINT_RIGHT_HAND_LITTLE_PROXIMAL_FB = 66,
    XR_BODY_JOINT_RIGHT_HAND_LITTLE_INTERMEDIATE_FB = 67,
    XR_BODY_JOINT_RIGHT_HAND_LITTLE_DISTAL_FB = 68,
    XR_BODY_JOINT_RIGHT_HAND_LITTLE_TIP_FB = 69,
    XR_BODY_JOINT_COUNT_FB = 70,
    XR_BODY_JOINT_NONE_FB = -1,
    XR_BODY_JOINT_FB_MAX_ENUM = 0x7FFFFFFF
} XrBodyJointFB;

typedef enum XrBodyJointSetFB {
    XR_BODY_JOINT_SET_DEFAULT_FB = 0,
    XR_BODY_JOINT_SET_FB_MAX_ENUM = 0x7FFFFFFF
} XrBodyJointSetFB;

/* Chained to XrSystemProperties. */
typedef struct XrSystemBodyTrackingPropertiesFB {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    XrBool32 supportsBodyTracking;
} XrSystemBodyTrackingPropertiesFB;

typedef struct XrBodyTrackerCreateInfoFB {
    XrStructureType type;
    const void *XR_MAY_ALIAS next;
    XrBodyJointSetFB bodyJointSet;
} XrBodyTrackerCreateInfoFB;

typedef struct XrBodySkeletonJointFB {
    int32_t joint;
    int32_t parentJoint;
    XrPosef pose;
} XrBodySkeletonJointFB;

typedef struct XrBodySkeletonFB {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    uint32_t jointCount;
    XrBodySkeletonJointFB *joints;
} XrBodySkeletonFB;

typedef struct XrBodyJointsLocateInfoFB {
    XrStructureType type;
    const void *XR_MAY_ALIAS next;
    XrSpace baseSpace;
    XrTime time;
} XrBodyJointsLocateInfoFB;

typedef struct XrBodyJointLocationFB {
    XrSpaceLocationFlags locationFlags;
    XrPosef pose;
} XrBodyJointLocationFB;

typedef struct XrBodyJointLocationsFB {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    XrBool32 isActive;
    float confidence;
    uint32_t jointCount;
    XrBodyJointLocationFB *jointLocations;
    uint32_t skeletonChangedCount;
    XrTime time;
} XrBodyJointLocationsFB;

typedef XrResult(XRAPI_PTR *PFN_xrCreateBodyTrackerFB)(XrSession session,
                                                       const XrBodyTrackerCreateInfoFB *createInfo,
                                                       XrBodyTrackerFB *bodyTracker);
typedef XrResult(XRAPI_PTR *PFN_xrDestroyBodyTrackerFB)(XrBodyTrackerFB bodyTracker);
typedef XrResult(XRAPI_PTR *PFN_xrLocateBodyJointsFB)(XrBodyTrackerFB bodyTracker,
                                                      const XrBodyJointsLocateInfoFB *locateInfo,
                                                      XrBodyJointLocationsFB *locations);
typedef XrResult(XRAPI_PTR *PFN_xrGetBodySkeletonFB)(XrBodyTrackerFB bodyTracker,
                                                     XrBodySkeletonFB *skeleton);
#endif /* XR_FB_body_tracking */

/* ---- XR_META_body_tracking_full_body ------------------------------------------------ */

#ifndef XR_META_body_tracking_full_body
#define XR_META_body_tracking_full_body 1
#define XR_META_body_tracking_full_body_SPEC_VERSION 1
#define XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME "XR_META_body_tracking_full_body"

#define XR_TYPE_SYSTEM_PROPERTIES_BODY_TRACKING_FULL_BODY_META ((XrStructureType)1000274000)
/* A value of XrBodyJointSetFB. */
#define XR_BODY_JOINT_SET_FULL_BODY_META ((XrBodyJointSetFB)1000274000)

/* Joints 0..69 are those of XrBodyJointFB; the legs follow. */
typedef enum XrFullBodyJointMETA {
    XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META = 70,
    XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META = 71,
    XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_TWIST_META = 72,
    XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META = 73,
    XR_FULL_BODY_JOINT_LEFT_FOOT_SUBTALAR_META = 74,
    XR_FULL_BODY_JOINT_LEFT_FOOT_TRANSVERSE_META = 75,
    XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META = 76,
    XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META = 77,
    XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META = 78,
    XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_TWIST_META = 79,
    XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META = 80,
    XR_FULL_BODY_JOINT_RIGHT_FOOT_SUBTALAR_META = 81,
    XR_FULL_BODY_JOINT_RIGHT_FOOT_TRANSVERSE_META = 82,
    XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META = 83,
    XR_FULL_BODY_JOINT_COUNT_META = 84,
    XR_FULL_BODY_JOINT_NONE_META = 85,
    XR_FULL_BODY_JOINT_META_MAX_ENUM = 0x7FFFFFFF
} XrFullBodyJointMETA;

typedef struct XrSystemPropertiesBodyTrackingFullBodyMETA {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    XrBool32 supportsFullBodyTracking;
} XrSystemPropertiesBodyTrackingFullBodyMETA;
#endif /* XR_META_body_tracking_full_body */

/* ---- XR_BD_body_tracking ------------------------------------------------------------ */

#ifndef XR_BD_body_tracking
#define XR_BD_body_tracking 1
#define XR_BD_body_tracking_SPEC_VERSION 1
#define XR_BD_BODY_TRACKING_EXTENSION_NAME "XR_BD_body_tracking"
#define XR_BODY_JOINT_COUNT_BD 24
#define XR_BODY_JOINT_WITHOUT_ARM_COUNT_BD 16

XR_DEFINE_HANDLE(XrBodyTrackerBD)

#define XR_OBJECT_TYPE_BODY_TRACKER_BD ((XrObjectType)1000385000)
#define XR_TYPE_BODY_TRACKER_CREATE_INFO_BD ((XrStructureType)1000385001)
#define XR_TYPE_BODY_JOINTS_LOCATE_INFO_BD ((XrStructureType)1000385002)
#define XR_TYPE_BODY_JOINT_LOCATIONS_BD ((XrStructureType)1000385003)
#define XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_BD ((XrStructureType)1000385004)

/* PICO's 24 joints (SMPL's), parents before children. At the T-pose every joint's frame
 * has +X to the body's right, +Y up and +Z to its back. */
typedef enum XrBodyJointBD {
    XR_BODY_JOINT_PELVIS_BD = 0,
    XR_BODY_JOINT_LEFT_HIP_BD = 1,
    XR_BODY_JOINT_RIGHT_HIP_BD = 2,
    XR_BODY_JOINT_SPINE1_BD = 3,
    XR_BODY_JOINT_LEFT_KNEE_BD = 4,
    XR_BODY_JOINT_RIGHT_KNEE_BD = 5,
    XR_BODY_JOINT_SPINE2_BD = 6,
    XR_BODY_JOINT_LEFT_ANKLE_BD = 7,
    XR_BODY_JOINT_RIGHT_ANKLE_BD = 8,
    XR_BODY_JOINT_SPINE3_BD = 9,
    XR_BODY_JOINT_LEFT_FOOT_BD = 10,
    XR_BODY_JOINT_RIGHT_FOOT_BD = 11,
    XR_BODY_JOINT_NECK_BD = 12,
    XR_BODY_JOINT_LEFT_COLLAR_BD = 13,
    XR_BODY_JOINT_RIGHT_COLLAR_BD = 14,
    XR_BODY_JOINT_HEAD_BD = 15,
    XR_BODY_JOINT_LEFT_SHOULDER_BD = 16,
    XR_BODY_JOINT_RIGHT_SHOULDER_BD = 17,
    XR_BODY_JOINT_LEFT_ELBOW_BD = 18,
    XR_BODY_JOINT_RIGHT_ELBOW_BD = 19,
    XR_BODY_JOINT_LEFT_WRIST_BD = 20,
    XR_BODY_JOINT_RIGHT_WRIST_BD = 21,
    XR_BODY_JOINT_LEFT_HAND_BD = 22,
    XR_BODY_JOINT_RIGHT_HAND_BD = 23,
    XR_BODY_JOINT_MAX_ENUM_BD = 0x7FFFFFFF
} XrBodyJointBD;

typedef enum XrBodyJointSetBD {
    XR_BODY_JOINT_SET_BODY_WITHOUT_ARM_BD = 1, /* pelvis .. head: 16 joints */
    XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD = 2, /* all 24 */
    XR_BODY_JOINT_SET_MAX_ENUM_BD = 0x7FFFFFFF
} XrBodyJointSetBD;

/* Chained to XrSystemProperties. */
typedef struct XrSystemBodyTrackingPropertiesBD {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    XrBool32 supportsBodyTracking;
} XrSystemBodyTrackingPropertiesBD;

typedef struct XrBodyTrackerCreateInfoBD {
    XrStructureType type;
    const void *XR_MAY_ALIAS next;
    XrBodyJointSetBD jointSet;
} XrBodyTrackerCreateInfoBD;

typedef struct XrBodyJointsLocateInfoBD {
    XrStructureType type;
    const void *XR_MAY_ALIAS next;
    XrSpace baseSpace;
    XrTime time;
} XrBodyJointsLocateInfoBD;

typedef struct XrBodyJointLocationBD {
    XrSpaceLocationFlags locationFlags;
    XrPosef pose;
} XrBodyJointLocationBD;

typedef struct XrBodyJointLocationsBD {
    XrStructureType type;
    void *XR_MAY_ALIAS next;
    XrBool32 allJointPosesTracked;
    uint32_t jointLocationCount;
    XrBodyJointLocationBD *jointLocations;
} XrBodyJointLocationsBD;

typedef XrResult(XRAPI_PTR *PFN_xrCreateBodyTrackerBD)(XrSession session,
                                                       const XrBodyTrackerCreateInfoBD *createInfo,
                                                       XrBodyTrackerBD *bodyTracker);
typedef XrResult(XRAPI_PTR *PFN_xrDestroyBodyTrackerBD)(XrBodyTrackerBD bodyTracker);
typedef XrResult(XRAPI_PTR *PFN_xrLocateBodyJointsBD)(XrBodyTrackerBD bodyTracker,
                                                      const XrBodyJointsLocateInfoBD *locateInfo,
                                                      XrBodyJointLocationsBD *locations);
#endif /* XR_BD_body_tracking */

#ifdef __cplusplus
}
#endif

#endif
