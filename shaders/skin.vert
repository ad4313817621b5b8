#version 330 core
// Skinned avatars (src/render/r_skin.c): linear-blend skinning with up to 4 joints per
// vertex; the joint matrices (avatar rest position to world, metres) come in a uniform
// block. Rest frames are world-aligned, so the same matrices turn the normals (their
// uniform scale is removed by the normalize in the fragment shader).
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in uvec4 a_joints;
layout(location = 4) in vec4 a_weights;

layout(std140) uniform Joints
{
    mat4 u_joints[64];
};

uniform mat4 u_view_proj;

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;

void main()
{
    mat4 skin = a_weights.x * u_joints[a_joints.x] + a_weights.y * u_joints[a_joints.y]
              + a_weights.z * u_joints[a_joints.z] + a_weights.w * u_joints[a_joints.w];
    vec4 world = skin * vec4(a_position, 1.0);
    v_world = world.xyz;
    v_normal = mat3(skin) * a_normal;
    v_uv = a_uv;
    gl_Position = u_view_proj * world;
}
