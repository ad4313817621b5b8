#version 330 core
// HUD text and panels in pixels (origin top left, +y down), never mirrored.
layout(location = 0) in vec2 a_position; // pixels
layout(location = 1) in vec2 a_uv;       // in the glyph atlas
layout(location = 2) in vec4 a_color;    // sRGB and opacity

uniform vec2 u_screen_px;

out vec2 v_uv;
out vec4 v_color;

void main()
{
    v_uv = a_uv;
    v_color = a_color;
    vec2 ndc = a_position / u_screen_px * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
}
