#version 330 core
// A floor grid at y = 0: lines every metre and fainter ones every 25 cm, the X axis in red
// and the Z axis in blue, soft shadows under the player, all fading out with distance from
// the player so the floor melts into the background. Anti-aliased with screen derivatives.
in vec3 v_world;

uniform vec3 u_focus;        // world; the grid is fully visible around it
uniform vec2 u_fade_m;       // distance from u_focus where fading starts and ends
uniform vec3 u_floor_color;  // sRGB
uniform vec3 u_line_color;   // sRGB
uniform vec4 u_shadow[3];    // x, z, radius (m), strength (0 to 1)

out vec4 o_color;

// 1 on a line of the grid with `spacing_m`, 0 away from it; lines are `width_px` wide.
float grid_line(vec2 p, float spacing_m, float width_px)
{
    vec2 c = p / spacing_m;
    vec2 d = abs(fract(c - 0.5) - 0.5) / max(fwidth(c), vec2(1e-6));
    float px = min(d.x, d.y);
    return 1.0 - clamp(px - 0.5 * width_px + 0.5, 0.0, 1.0);
}

// 1 on the world axis line x = 0 (axis 0) or z = 0 (axis 1).
float axis_line(float coord, float width_px)
{
    float px = abs(coord) / max(fwidth(coord), 1e-6);
    return 1.0 - clamp(px - 0.5 * width_px + 0.5, 0.0, 1.0);
}

void main()
{
    vec2 p = v_world.xz;
    float dist = length(p - u_focus.xz);
    float fade = 1.0 - smoothstep(u_fade_m.x, u_fade_m.y, dist);
    if (fade <= 0.0)
        discard; // beyond the fade: only the background, and no work for it

    // Minor lines vanish where they would be denser than a few pixels (no moire).
    float density = max(fwidth(p.x), fwidth(p.y));
    float minor = grid_line(p, 0.25, 1.0) * (1.0 - smoothstep(0.015, 0.05, density)) * 0.35;
    float major = grid_line(p, 1.0, 1.6) * (1.0 - smoothstep(0.08, 0.25, density));

    vec3 color = mix(u_floor_color, u_line_color, max(major, minor));
    color = mix(color, vec3(0.80, 0.32, 0.30), axis_line(v_world.z, 2.0) * 0.8);
    color = mix(color, vec3(0.30, 0.45, 0.85), axis_line(v_world.x, 2.0) * 0.8);

    float shade = 1.0;
    for (int i = 0; i < 3; ++i) {
        vec2 d = (p - u_shadow[i].xy) / max(u_shadow[i].z, 1e-3);
        shade -= u_shadow[i].w * exp(-2.5 * dot(d, d));
    }
    color *= clamp(shade, 0.35, 1.0);
    o_color = vec4(color, fade);
}
