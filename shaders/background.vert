#version 330 core
// One triangle that covers the screen (no vertex buffer: made from gl_VertexID).
out vec2 v_uv;

void main()
{
    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    v_uv = corner;
    gl_Position = vec4(corner * 2.0 - 1.0, 1.0, 1.0);
}
