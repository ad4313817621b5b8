#version 330 core
// Soft studio lighting in linear space: a key light, a fill from the other side, sky and
// ground ambient, a rim that separates the figure from the background, and a little
// specular. Colours come in sRGB and go out in sRGB, with u_alpha for blending.
in vec3 v_world;
in vec3 v_normal;
in vec4 v_color;

uniform vec3 u_camera_pos; // world, metres
uniform vec3 u_key_dir;    // unit, towards the key light
uniform float u_alpha;     // 1 for solid parts, less for the translucent ghost

out vec4 o_color;

vec3 to_linear(vec3 c) { return pow(c, vec3(2.2)); }
vec3 to_srgb(vec3 c) { return pow(c, vec3(1.0 / 2.2)); }

void main()
{
    vec3 n = normalize(v_normal);
    vec3 v = normalize(u_camera_pos - v_world);
    vec3 albedo = to_linear(v_color.rgb);

    vec3 sky = vec3(0.26, 0.29, 0.36);
    vec3 ground = vec3(0.10, 0.09, 0.08);
    vec3 ambient = mix(ground, sky, n.y * 0.5 + 0.5);

    float key = max(dot(n, u_key_dir), 0.0);
    vec3 fill_dir = normalize(vec3(-u_key_dir.x, 0.3, -u_key_dir.z));
    float fill = max(dot(n, fill_dir), 0.0) * 0.25;
    vec3 h = normalize(u_key_dir + v);
    float spec = pow(max(dot(n, h), 0.0), 40.0) * 0.22;
    float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0) * 0.30;

    vec3 lit = albedo * (ambient + vec3(1.0, 0.97, 0.92) * key + fill) + vec3(spec)
             + rim * vec3(0.55, 0.65, 0.85);
    vec3 color = mix(lit, albedo, v_color.a);
    o_color = vec4(to_srgb(clamp(color, 0.0, 1.0)), u_alpha);
}
