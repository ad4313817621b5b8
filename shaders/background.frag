#version 330 core
// A studio backdrop: a vertical gradient, lighter towards the horizon, with a soft vignette.
in vec2 v_uv;

uniform vec3 u_top_color;     // sRGB
uniform vec3 u_horizon_color; // sRGB

out vec4 o_color;

void main()
{
    float t = smoothstep(0.0, 1.0, v_uv.y);
    vec3 color = mix(u_horizon_color, u_top_color, t);
    vec2 c = v_uv - 0.5;
    color *= 1.0 - 0.35 * dot(c, c);
    o_color = vec4(color, 1.0);
}
