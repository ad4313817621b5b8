/*
 * The program's subcommands, one file each. Each takes the arguments from its own name
 * on (argv[0] = "solve"), prints its errors, and returns an exit code (enum app_exit).
 */
#ifndef EMBODY_APP_COMMANDS_H
#define EMBODY_APP_COMMANDS_H

/* embody mocap2stream CLIP.bvh [-o OUT.csv] [--unit-scale S]: the 3-point stream a
 * headset and two controllers would have reported for a motion capture clip
 * (PROTOCOL section 2, st_mocap_to_stream). Without -o (or with -o -) to stdout. */
int app_cmd_mocap2stream(int argc, char **argv);

/* embody solve STREAM.csv -o OUT.bvh (--avatar CLIP.bvh | --height M): reconstructs every
 * row of a stream and writes the body's motion as BVH (PROTOCOL section 3). */
int app_cmd_solve(int argc, char **argv);

/* embody eval [DIR] ...: the evaluation protocol (src/eval, ev_main). */
int app_cmd_eval(int argc, char **argv);

/* embody make-avatar -o OUT.vrm [--skeleton FILE.json] [--rig R] [--detail N]: writes the
 * avatar embody makes itself (av_make_glb), a skinned humanoid glTF/VRM. */
int app_cmd_make_avatar(int argc, char **argv);
/* embody train CLIP_DIR -o MODEL ...: learns the body-pose prior (src/prior, pr_train). */
int app_cmd_train(int argc, char **argv);

/* embody proportions [DIR...] [--skeleton FILE.json]: the mean body proportions of the
 * people in folders of clips beside the default humanoid's (sk_humanoid_proportions). */
int app_cmd_proportions(int argc, char **argv);

#endif
