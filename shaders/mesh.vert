#version 330 core
// Lit meshes (limbs, head, hands, feet, devices): one instance per part, with its model
// matrix (object to world, metres) and colour.
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in mat4 a_model; // locations 2 to 5
layout(location = 6) in vec4 a_color; // rgb in sRGB; a = how much is unlit (0 lit, 1 flat)

uniform mat4 u_view_proj;

out vec3 v_world;
out vec3 v_normal;
out vec4 v_color;

void main()
{
    vec4 world = a_model * vec4(a_position, 1.0);
    v_world = world.xyz;
    // Parts are a rotation times an uneven scale (capsules, ellipsoids, boxes), so the
    // inverse transpose of the model matrix is the same rotation times the inverse scale:
    // each column divided by its squared length. Cheaper than inverse() per vertex.
    mat3 m = mat3(a_model);
    vec3 inv_scale2 = 1.0 / max(vec3(dot(m[0], m[0]), dot(m[1], m[1]), dot(m[2], m[2])),
                                vec3(1e-12));
    v_normal = m * (a_normal * inv_scale2);
    v_color = a_color;
    gl_Position = u_view_proj * world;
}
