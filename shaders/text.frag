#version 330 core
// Glyph coverage from the font atlas (one channel) times the vertex colour. Panels use a
// texel of the atlas that is fully covered.
in vec2 v_uv;
in vec4 v_color;

uniform sampler2D u_atlas;

out vec4 o_color;

void main()
{
    float coverage = texture(u_atlas, v_uv).r;
    o_color = vec4(v_color.rgb, v_color.a * coverage);
}
