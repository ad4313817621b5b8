#version 330 core
// Avatar materials (src/render/r_material.c): base colour (linear factor times an sRGB
// texture), alpha cut-out, and three ways to shade: lit (the studio lighting of mesh.frag),
// toon (VRM MToon: the key light in two hard bands, so the model reads as drawn), and
// unlit (the colour as it is).
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv;

uniform vec3 u_camera_pos; // world, metres
uniform vec3 u_key_dir;    // unit, towards the key light
uniform vec4 u_base_color; // linear RGBA
uniform sampler2D u_base_texture; // sRGB; white when the material has none
uniform float u_alpha_cutoff;     // fragments below are dropped; 0 for opaque
uniform int u_shading;            // 0 lit, 1 unlit, 2 toon

out vec4 o_color;

vec3 to_linear(vec3 c) { return pow(c, vec3(2.2)); }
vec3 to_srgb(vec3 c) { return pow(c, vec3(1.0 / 2.2)); }

void main()
{
    vec4 tex = texture(u_base_texture, v_uv);
    vec4 base = u_base_color * vec4(to_linear(tex.rgb), tex.a);
    if (base.a < u_alpha_cutoff)
        discard;
    vec3 albedo = base.rgb;
    vec3 n = normalize(v_normal);
    vec3 v = normalize(u_camera_pos - v_world);
    if (!gl_FrontFacing)
        n = -n;

    vec3 color;
    if (u_shading == 1) {
        color = albedo;
    } else if (u_shading == 2) {
        float key = dot(n, u_key_dir) > 0.0 ? 1.0 : 0.55;
        color = albedo * (0.35 + 0.65 * key);
    } else {
        vec3 sky = vec3(0.26, 0.29, 0.36);
        vec3 ground = vec3(0.10, 0.09, 0.08);
        vec3 ambient = mix(ground, sky, n.y * 0.5 + 0.5);
        float key = max(dot(n, u_key_dir), 0.0);
        vec3 fill_dir = normalize(vec3(-u_key_dir.x, 0.3, -u_key_dir.z));
        float fill = max(dot(n, fill_dir), 0.0) * 0.25;
        vec3 h = normalize(u_key_dir + v);
        float spec = pow(max(dot(n, h), 0.0), 40.0) * 0.22;
        float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0) * 0.30;
        color = albedo * (ambient + vec3(1.0, 0.97, 0.92) * key + fill) + vec3(spec)
              + rim * vec3(0.55, 0.65, 0.85);
    }
    o_color = vec4(to_srgb(clamp(color, 0.0, 1.0)), 1.0);
}
