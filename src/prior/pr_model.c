/*
 * The prior's network and its model file (include/embody/prior.h).
 *
 * File layout, little-endian: a 256-byte header
 *     0 magic "EMBPRIOR"   8 version   12 header bytes   16 feature set id
 *    20 output set id     24 features  28 outputs        32 hidden units per layer
 *    36 hidden layers (2) 40 window    44 stride          48 parameter count
 *    52 CRC-32 of the whole file with these 4 bytes read as 0
 *    56 note (128 bytes, NUL-terminated text)
 *   184 subjects held out of training (64 bytes, NUL-terminated text, "02,07,35")
 *   248..255 zero
 * then the parameters as float32 in pr_model's order: input mean and deviation, output
 * mean and deviation, then each layer's weights ([inputs][outputs]) and biases.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embody/prior.h"
#include "pr_internal.h"

#define HEADER_BYTES 256
#define HIDDEN_LAYERS 2
#define NOTE_OFFSET 56
#define CRC_OFFSET 52
#define HOLDOUT_OFFSET 184
/* Model files are small; anything far larger is not one. */

long
pr_model_param_count(int f, int h, int o)
{
    return 2L * f + 2L * o + (long)f * h + h + (long)h * h + h + (long)h * o + o;
}

static void
point_params(struct pr_model *m)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    float *p = m->params;
    m->in_mean = p, p += f;
    m->in_std = p, p += f;
    m->out_mean = p, p += o;
    m->out_std = p, p += o;
    m->w1 = p, p += (long)f * h;
    m->b1 = p, p += h;
    m->w2 = p, p += (long)h * h;
    m->b2 = p, p += h;
    m->w3 = p, p += (long)h * o;
    m->b3 = p;
}

/* The layers' weights (w1, w2, w3): what model->half holds. */
static long
weight_count(const struct pr_model *m)
{
    const long f = m->feature_count, h = m->hidden_count, o = m->output_count;
    return f * h + h * h + h * o;
}

static enum em_result
alloc_model(struct pr_model *m, int features, int hidden, int outputs)
{
    m->feature_count = features;
    m->hidden_count = hidden;
    m->output_count = outputs;
    m->params = calloc((size_t)pr_model_param_count(features, hidden, outputs), sizeof(float));
    m->half = calloc((size_t)weight_count(m), sizeof *m->half);
    if (!m->params || !m->half)
        return EM_ERROR_OUT_OF_MEMORY;
    point_params(m);
    return EM_OK;
}

enum em_result
pr_model_init(struct pr_model *out, int hidden_count, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (hidden_count < 1 || hidden_count > PR_MAX_HIDDEN)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "prior: hidden units per layer must be 1 to %d, got %d", PR_MAX_HIDDEN,
                       hidden_count);
    if (alloc_model(out, PR_FEATURE_COUNT, hidden_count, PR_OUTPUT_COUNT) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "prior: out of memory");
    for (int i = 0; i < out->feature_count; ++i)
        out->in_std[i] = 1.0f;
    for (int i = 0; i < out->output_count; ++i)
        out->out_std[i] = 1.0f;
    return EM_OK;
}

void
pr_model_fini(struct pr_model *model)
{
    free(model->params);
    free(model->half);
    memset(model, 0, sizeof *model);
}

/* ---- Half precision (IEEE binary16) ---- */

/* The binary16 nearest to `v` (ties to even); beyond the largest half, infinity (a weight
 * that large is refused at load, pr_check.c). */
static uint16_t
half_from_float(float v)
{
    uint32_t x;
    memcpy(&x, &v, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude >= 0x7F800000u) /* infinity, NaN (kept a NaN) */
        return (uint16_t)(sign | 0x7C00u | (magnitude > 0x7F800000u ? 0x200u : 0u));
    if (magnitude >= 0x477FF000u) /* rounds past 65504 */
        return (uint16_t)(sign | 0x7C00u);
    if (magnitude < 0x38800000u) { /* below the smallest normal half: a subnormal or 0 */
        if (magnitude < 0x33000000u)
            return sign;
        const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - (int)(magnitude >> 23); /* 14 .. 24 */
        uint32_t half = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1u), middle = 1u << (shift - 1);
        if (rest > middle || (rest == middle && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = (magnitude - 0x38000000u) >> 13; /* rebias the exponent 127 -> 15 */
    const uint32_t rest = magnitude & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++; /* may carry into the exponent: still the right value */
    return (uint16_t)(sign | half);
}

static float
float_from_half(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
    uint32_t x;
    if (exponent == 0x1Fu)
        x = sign | 0x7F800000u | (mantissa << 13);
    else if (exponent != 0)
        x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    else if (mantissa == 0)
        x = sign;
    else { /* subnormal: normalise */
        int e = -1;
        uint32_t m = mantissa;
        do {
            ++e;
            m <<= 1;
        } while (!(m & 0x400u));
        x = sign | ((uint32_t)(112 - e) << 23) | ((m & 0x3FFu) << 13);
    }
    float v;
    memcpy(&v, &x, sizeof v);
    return v;
}

void
pr_model_pack(struct pr_model *m)
{
    float *const layers[] = {m->w1, m->w2, m->w3};
    const long sizes[] = {(long)m->feature_count * m->hidden_count,
                          (long)m->hidden_count * m->hidden_count,
                          (long)m->hidden_count * m->output_count};
    uint16_t *half = m->half;
    for (int l = 0; l < 3; ++l)
        for (long i = 0; i < sizes[l]; ++i) {
            *half = half_from_float(layers[l][i]);
            layers[l][i] = float_from_half(*half++);
        }
    m->packed = true;
}

/* y = b + x W, W stored a row per input: the inner loop runs along contiguous rows, one
 * independent sum per output, so it vectorizes without reassociating anything. Four
 * inputs are added per pass over y, left to right as one input at a time would add
 * them, so y is loaded and stored a quarter as often. This is the portable path (any
 * CPU; ISO C, no contraction into FMA): pr_model_infer_portable. Built twice on x86-64,
 * for AVX2 and for any, picked at load: the same operations per output in the same
 * order, so the same bits either way.
 *
 * Only the inputs listed in `used` (n_used of them, in order) are added: a hidden layer's
 * units that its ReLU left at zero are left out, as a zero input adds a zero product,
 * which leaves every sum as it is (weights are finite, checked at load). At most a sum of
 * exactly -0 stays -0 where the zero product would have made it +0: the next ReLU makes
 * both 0, and so does the outputs' added mean (unless that mean is itself -0). Reading
 * the weights is most of a run's time, and about half the units are off. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
dense(const float *restrict w, const float *restrict b, const float *restrict x,
      const int *restrict used, int n_used, int n_out, float *restrict y)
{
    for (int j = 0; j < n_out; ++j)
        y[j] = b[j];
    int k = 0;
    for (; k + 4 <= n_used; k += 4) {
        const int i0 = used[k], i1 = used[k + 1], i2 = used[k + 2], i3 = used[k + 3];
        const float x0 = x[i0], x1 = x[i1], x2 = x[i2], x3 = x[i3];
        const float *restrict r0 = w + (long)i0 * n_out;
        const float *restrict r1 = w + (long)i1 * n_out;
        const float *restrict r2 = w + (long)i2 * n_out;
        const float *restrict r3 = w + (long)i3 * n_out;
        for (int j = 0; j < n_out; ++j)
            y[j] = (((y[j] + r0[j] * x0) + r1[j] * x1) + r2[j] * x2) + r3[j] * x3;
    }
    for (; k < n_used; ++k) {
        const float xi = x[used[k]];
        const float *restrict row = w + (long)used[k] * n_out;
        for (int j = 0; j < n_out; ++j)
            y[j] += row[j] * xi;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_FMA_PATH 1

/* The same sums on the half-precision weights (pr_model_pack: the same values as the
 * float ones), with AVX2, F16C and fused multiply-adds: each product added without its
 * own rounding, so the results differ from dense's within float rounding (test_prior
 * checks that the two paths agree). Half the bytes to read, the used inputs only, four
 * rows per pass over y as in dense. */
__attribute__((target("avx2,fma,f16c"))) static void
dense_half(const uint16_t *restrict w, const float *restrict b, const float *restrict x,
           const int *restrict used, int n_used, int n_out, float *restrict y)
{
    const int wide = n_out & ~7;
    for (int j = 0; j < n_out; ++j)
        y[j] = b[j];
    int k = 0;
    for (; k + 4 <= n_used; k += 4) {
        const int i0 = used[k], i1 = used[k + 1], i2 = used[k + 2], i3 = used[k + 3];
        const uint16_t *restrict r0 = w + (long)i0 * n_out;
        const uint16_t *restrict r1 = w + (long)i1 * n_out;
        const uint16_t *restrict r2 = w + (long)i2 * n_out;
        const uint16_t *restrict r3 = w + (long)i3 * n_out;
        const __m256 x0 = _mm256_set1_ps(x[i0]), x1 = _mm256_set1_ps(x[i1]);
        const __m256 x2 = _mm256_set1_ps(x[i2]), x3 = _mm256_set1_ps(x[i3]);
        for (int j = 0; j < wide; j += 8) {
            __m256 acc = _mm256_loadu_ps(y + j);
            acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(r0 + j))),
                                  x0, acc);
            acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(r1 + j))),
                                  x1, acc);
            acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(r2 + j))),
                                  x2, acc);
            acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(r3 + j))),
                                  x3, acc);
            _mm256_storeu_ps(y + j, acc);
        }
        for (int j = wide; j < n_out; ++j) {
            y[j] = fmaf(_cvtsh_ss(r0[j]), x[i0], y[j]);
            y[j] = fmaf(_cvtsh_ss(r1[j]), x[i1], y[j]);
            y[j] = fmaf(_cvtsh_ss(r2[j]), x[i2], y[j]);
            y[j] = fmaf(_cvtsh_ss(r3[j]), x[i3], y[j]);
        }
    }
    for (; k < n_used; ++k) {
        const uint16_t *restrict row = w + (long)used[k] * n_out;
        for (int j = 0; j < n_out; ++j)
            y[j] = fmaf(_cvtsh_ss(row[j]), x[used[k]], y[j]);
    }
}

/* F16C from CPUID (leaf 1, ECX bit 29): not every compiler's __builtin_cpu_supports knows
 * it; AVX2's check already covers the operating system's saving of the vector registers. */
static bool
cpu_has_f16c(void)
{
    unsigned int eax, ebx, ecx, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}

static bool
cpu_has_half_path(void)
{
    static int known = -1; /* the answer never changes; a race writes the same value */
    if (known < 0)
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    return known > 0;
}
#else
#define HAVE_FMA_PATH 0
#endif

/* x = max(x, 0) (NaN: 0), and the indices of the units left above zero, in order, into
 * out_used; returns how many. Without branches: which units fire changes every frame. */
static int
relu(float *x, int n, int *out_used)
{
    int used = 0;
    for (int i = 0; i < n; ++i) {
        const bool on = x[i] > 0.0f;
        x[i] = on ? x[i] : 0.0f;
        out_used[used] = i;
        used += on;
    }
    return used;
}

/* Every feature is used. */
static int
all_used(int n, int *out_used)
{
    for (int i = 0; i < n; ++i)
        out_used[i] = i;
    return n;
}

static void
denormalise_outputs(const struct pr_model *m, float *out)
{
    for (int i = 0; i < m->output_count; ++i)
        out[i] = out[i] * m->out_std[i] + m->out_mean[i];
}

void
pr_model_infer_portable(const struct pr_model *m, const float *features, float *out)
{
    float x[PR_FEATURE_COUNT], h1[PR_MAX_HIDDEN], h2[PR_MAX_HIDDEN];
    int used[PR_FEATURE_COUNT > PR_MAX_HIDDEN ? PR_FEATURE_COUNT : PR_MAX_HIDDEN];
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    pr_normalise_features(m, features, x);
    dense(m->w1, m->b1, x, used, all_used(f, used), h, h1);
    dense(m->w2, m->b2, h1, used, relu(h1, h, used), h, h2);
    dense(m->w3, m->b3, h2, used, relu(h2, h, used), o, out);
    denormalise_outputs(m, out);
}

#if HAVE_FMA_PATH
static void
infer_half(const struct pr_model *m, const float *features, float *out)
{
    float x[PR_FEATURE_COUNT], h1[PR_MAX_HIDDEN], h2[PR_MAX_HIDDEN];
    int used[PR_FEATURE_COUNT > PR_MAX_HIDDEN ? PR_FEATURE_COUNT : PR_MAX_HIDDEN];
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    const uint16_t *w1 = m->half, *w2 = w1 + (long)f * h, *w3 = w2 + (long)h * h;
    pr_normalise_features(m, features, x);
    dense_half(w1, m->b1, x, used, all_used(f, used), h, h1);
    dense_half(w2, m->b2, h1, used, relu(h1, h, used), h, h2);
    dense_half(w3, m->b3, h2, used, relu(h2, h, used), o, out);
    denormalise_outputs(m, out);
}
#endif

void
pr_model_infer(const struct pr_model *m, const float *features, float *out)
{
#if HAVE_FMA_PATH
    if (m->packed && cpu_has_half_path()) {
        infer_half(m, features, out);
        return;
    }
#endif
    pr_model_infer_portable(m, features, out);
}

/* ---- CRC-32 (IEEE, reflected 0xEDB88320) ---- */

uint32_t
pr_crc32(uint32_t crc, const unsigned char *bytes, long size)
{
    crc = ~crc;
    for (long i = 0; i < size; ++i) {
        crc ^= bytes[i];
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* ---- Little-endian fields ---- */

static void
put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t
get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
put_f32(unsigned char *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_u32(p, u);
}

static float
get_f32(const unsigned char *p)
{
    const uint32_t u = get_u32(p);
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The whole file in memory, checksum filled in. */
/* The outputs of each output definition this program reads (set 1 had no torso, set 2
 * no back, set 3 no elbows), from set 1. */
static const int outputs_of_set[] = {PR_OUTPUT_COUNT_SET1, PR_OUTPUT_COUNT_SET2,
                                     PR_OUTPUT_COUNT_SET3, PR_OUTPUT_COUNT};
#define OUTPUT_SETS ((uint32_t)(sizeof outputs_of_set / sizeof outputs_of_set[0]))

/* The output definition a model of `output_count` outputs was trained for. */
static uint32_t
output_set_of(int output_count)
{
    for (uint32_t set = 1; set <= OUTPUT_SETS; ++set)
        if (outputs_of_set[set - 1] == output_count)
            return set;
    return PR_OUTPUT_SET_ID;
}

/* The outputs of output definition `set`; 0 for a set this program does not know. */
static int
output_count_of(uint32_t set)
{
    return set >= 1u && set <= OUTPUT_SETS ? outputs_of_set[set - 1] : 0;
}

static unsigned char *
serialize(const struct pr_model *m, long *out_size)
{
    const long params = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    const long size = HEADER_BYTES + 4 * params;
    unsigned char *buf = calloc((size_t)size, 1);
    if (!buf)
        return NULL;
    memcpy(buf, PR_MODEL_MAGIC, 8);
    const uint32_t fields[] = {PR_MODEL_VERSION,
                               HEADER_BYTES,
                               PR_FEATURE_SET_ID,
                               output_set_of(m->output_count),
                               (uint32_t)m->feature_count,
                               (uint32_t)m->output_count,
                               (uint32_t)m->hidden_count,
                               HIDDEN_LAYERS,
                               PR_WINDOW,
                               PR_STRIDE,
                               (uint32_t)params};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
        put_u32(buf + 8 + 4 * i, fields[i]);
    snprintf((char *)buf + NOTE_OFFSET, PR_NOTE_MAX, "%s", m->note);
    snprintf((char *)buf + HOLDOUT_OFFSET, PR_HOLDOUT_MAX, "%s", m->holdout);
    for (long i = 0; i < params; ++i)
        put_f32(buf + HEADER_BYTES + 4 * i, m->params[i]);
    put_u32(buf + CRC_OFFSET, pr_crc32(0, buf, size));
    *out_size = size;
    return buf;
}

enum em_result
pr_model_save(const struct pr_model *m, const char *path, struct em_error *err)
{
    long size = 0;
    unsigned char *buf = serialize(m, &size);
    if (!buf)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return em_fail(err, EM_ERROR_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    const bool wrote = fwrite(buf, 1, (size_t)size, f) == (size_t)size;
    const bool closed = fclose(f) == 0;
    free(buf);
    if (!wrote || !closed) {
        remove(path);
        return em_fail(err, EM_ERROR_IO, "%s: write failed (disk full?)", path);
    }
    return EM_OK;
}

static enum em_result
check_header(const unsigned char *b, long size, const char *src, struct em_error *err)
{
    if (size < 8 || memcmp(b, PR_MODEL_MAGIC, 8) != 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: not an embody prior model (expected the magic \"%s\" at the start)",
                       src, PR_MODEL_MAGIC);
    if (size < HEADER_BYTES)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: truncated: %ld bytes, the header alone is %d bytes", src, size,
                       HEADER_BYTES);
    const uint32_t version = get_u32(b + 8);
    if (version != PR_MODEL_VERSION)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: model file version %u, this program reads version %u", src, version,
                       PR_MODEL_VERSION);
    if (get_u32(b + 12) != HEADER_BYTES)
        return em_fail(err, EM_ERROR_PARSE, "%s: header size %u, expected %d", src, get_u32(b + 12),
                       HEADER_BYTES);
    const struct {
        int offset;
        uint32_t expected;
        const char *what;
    } fixed[] = {
        {16, PR_FEATURE_SET_ID, "feature definition id"},
        {24, PR_FEATURE_COUNT, "feature count"},
        {36, HIDDEN_LAYERS, "hidden layer count"},
        {40, PR_WINDOW, "history window (samples)"},
        {44, PR_STRIDE, "history stride (frames)"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) {
        const uint32_t v = get_u32(b + fixed[i].offset);
        if (v != fixed[i].expected)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "%s: wrong size: %s is %u, this program computes %u", src, fixed[i].what,
                           v, fixed[i].expected);
    }
    const uint32_t set = get_u32(b + 20), outputs = get_u32(b + 28);
    if (output_count_of(set) == 0)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: output definition id %u, this program reads 1 (pelvis and legs), 2 "
                       "(and the torso) and %u (and the back)",
                       src, set, PR_OUTPUT_SET_ID);
    if (outputs != (uint32_t)output_count_of(set))
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: wrong size: output count is %u, output definition %u has %d", src,
                       outputs, set, output_count_of(set));
    const uint32_t hidden = get_u32(b + 32);
    if (hidden < 1 || hidden > PR_MAX_HIDDEN)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: wrong size: %u hidden units per layer, expected 1 to %d", src, hidden,
                       PR_MAX_HIDDEN);
    const long params = pr_model_param_count(PR_FEATURE_COUNT, (int)hidden, (int)outputs);
    if (get_u32(b + 48) != (uint32_t)params)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: wrong size: the header says %u parameters, its sizes make %ld", src,
                       get_u32(b + 48), params);
    const long expected = HEADER_BYTES + 4 * params;
    if (size < expected)
        return em_fail(err, EM_ERROR_PARSE, "%s: truncated: %ld bytes, expected %ld", src, size,
                       expected);
    if (size > expected)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: %ld bytes, expected %ld (trailing data after the weights)", src, size,
                       expected);
    if (b[NOTE_OFFSET + PR_NOTE_MAX - 1] != 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: the note is not NUL-terminated", src);
    if (b[HOLDOUT_OFFSET + PR_HOLDOUT_MAX - 1] != 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: the holdout list is not NUL-terminated", src);
    return EM_OK;
}

static uint32_t
file_crc(const unsigned char *b, long size)
{
    static const unsigned char zero[4] = {0, 0, 0, 0};
    uint32_t crc = pr_crc32(0, b, CRC_OFFSET);
    crc = pr_crc32(crc, zero, 4);
    return pr_crc32(crc, b + CRC_OFFSET + 4, size - CRC_OFFSET - 4);
}

static enum em_result
check_params(const struct pr_model *m, const char *src, struct em_error *err)
{
    const long n = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    for (long i = 0; i < n; ++i)
        if (!isfinite(m->params[i]))
            return em_fail(err, EM_ERROR_PARSE, "%s: parameter %ld is not a finite number", src, i);
    for (int i = 0; i < m->feature_count; ++i)
        if (!(m->in_std[i] > 0.0f))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: input %d's deviation is %g, expected a positive number", src, i,
                           (double)m->in_std[i]);
    for (int i = 0; i < m->output_count; ++i)
        if (!(m->out_std[i] > 0.0f))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: output %d's deviation is %g, expected a positive number", src, i,
                           (double)m->out_std[i]);
    return EM_OK;
}

enum em_result
pr_model_parse(const unsigned char *b, long size, const char *src, struct pr_model *out,
               struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result r = check_header(b, size, src, err);
    if (r != EM_OK)
        return r;
    const uint32_t stored = get_u32(b + CRC_OFFSET), actual = file_crc(b, size);
    if (stored != actual)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: corrupt: checksum 0x%08x does not match the contents (0x%08x)", src,
                       stored, actual);
    if (alloc_model(out, PR_FEATURE_COUNT, (int)get_u32(b + 32), (int)get_u32(b + 28)) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", src);
    memcpy(out->note, b + NOTE_OFFSET, PR_NOTE_MAX);
    memcpy(out->holdout, b + HOLDOUT_OFFSET, PR_HOLDOUT_MAX);
    const long n = pr_model_param_count(out->feature_count, out->hidden_count, out->output_count);
    for (long i = 0; i < n; ++i)
        out->params[i] = get_f32(b + HEADER_BYTES + 4 * i);
    r = check_params(out, src, err);
    if (r != EM_OK)
        pr_model_fini(out);
    else
        pr_model_pack(out);
    return r;
}
