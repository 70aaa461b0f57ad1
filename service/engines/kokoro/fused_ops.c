/* Kokoro's decoder spends most of its time not in its products but in the sixteen elementwise
   operators the export spells out between two of them: an instance norm over time, the style's
   scale and shift, the Snake activation x + sin(a x)^2 / a, and the dynamic 8-bit quantization of
   the next product's input. This library is those sixteen as one onnxruntime custom operator
   (domain "voxlite", put in the graph by fused.py), in a few passes over the tensor. Where the
   run starts at a convolution's int32 product, as the 8-bit matrix products leave it (convs.py:
   channels last), the operator also takes over the transpose and the dequantization before it,
   (product + bias) * scale, and the residual sum when there is one:

     AdaSnakeQuant(x [1, C, T] float, style...)
     AdaSnakeQuantLast(product [T, C] int32, bias int32, product_scale, style...)
       -> (q [1, T, C] uint8, scale, zero_point)
     AdaSnakeQuantResidual(product, bias, product_scale, x_old [1, C, T], style...)
       -> (x_old + the dequantized product [1, C, T], q, scale, zero_point)

   where style... is gain, beta, alpha, inv_alpha and the norm's eps. q is written channels last,
   as the next product's im2col reads it. That im2col is an operator here too:

     Im2Col(x [1, T, C] uint8, zero_point, geometry [taps, dilation, before, after] int64)
       -> rows [T', taps * C]: row t holds x at steps t + j * dilation - before, j < taps, the
          zero point where that falls in the padding

   in place of onnxruntime's Gather of the padded input, which copies row by row through its
   general indexing (convs.py builds that form). The generator's residual blocks end with a sum
   that no norm follows (the blocks' outputs are averaged); it is an operator of its own:

     ResidualSum(product, bias, product_scale, x_old [1, C, T]) -> x_old + the product [1, C, T]

   docs/kokoro.md, "Decoder forms", has what each saves and how the audio was judged
   (`python -m bench.kokoro_fused`). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* onnxruntime's C API is one table of function pointers (OrtApi), handed to RegisterCustomOps
   through OrtApiBase, that only ever grows: an entry keeps its position from the version that
   added it. These are the positions, in API version 1, of the entries used here. */
typedef void Status;
typedef struct Api { void *fn[1]; } Api;
typedef struct ApiBase {
    const Api *(*get_api)(uint32_t version);
    const char *(*version_string)(void);
} ApiBase;
enum {
    CREATE_CUSTOM_OP_DOMAIN = 26,
    CUSTOM_OP_DOMAIN_ADD = 27,
    ADD_CUSTOM_OP_DOMAIN = 28,
    GET_TENSOR_MUTABLE_DATA = 51,
    GET_DIMENSIONS_COUNT = 61,
    GET_DIMENSIONS = 62,
    GET_TENSOR_TYPE_AND_SHAPE = 65,
    KERNEL_CONTEXT_GET_INPUT = 90,
    KERNEL_CONTEXT_GET_OUTPUT = 91,
    RELEASE_STATUS = 93,
    RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99,
};
enum { TYPE_FLOAT = 1, TYPE_UINT8 = 2, TYPE_INT32 = 6, TYPE_INT64 = 7 };

/* An operator's description as onnxruntime reads it for version 1 of the custom-op interface:
   these twelve members, in this order (onnxruntime reads the two characteristics whatever the
   version). */
typedef struct Op {
    uint32_t version;
    void *(*create_kernel)(const struct Op *op, const Api *api, const void *info);
    const char *(*name)(const struct Op *op);
    const char *(*provider)(const struct Op *op);
    int (*input_type)(const struct Op *op, size_t index);
    size_t (*input_count)(const struct Op *op);
    int (*output_type)(const struct Op *op, size_t index);
    size_t (*output_count)(const struct Op *op);
    void (*compute)(void *kernel, void *context);
    void (*destroy)(void *kernel);
    int (*input_characteristic)(const struct Op *op, size_t index);
    int (*output_characteristic)(const struct Op *op, size_t index);
} Op;

static const Api *api;
#define CALL(entry, type, ...) ((type)api->fn[entry])(__VA_ARGS__)
typedef Status *(*get_input_fn)(const void *, size_t, const void **);
typedef Status *(*get_output_fn)(void *, size_t, const int64_t *, size_t, void **);
typedef Status *(*data_fn)(const void *, void **);
typedef Status *(*shape_fn)(const void *, void **);
typedef Status *(*count_fn)(const void *, size_t *);
typedef Status *(*dims_fn)(const void *, int64_t *, size_t);
typedef void (*release_fn)(void *);

/* sin(x)^2. It has period pi, so x is reduced by pi (a two-part constant keeps the remainder
   exact to float precision) and sin taken by its Taylor polynomial to x^11 on [-pi/2, pi/2],
   whose error (below 6e-8) is float's own. */
static inline float sin2(float x) {
    float k = rintf(x * 0.318309886183790671f);
    float u = (x - k * 3.14159274101257324f) + k * 8.74227766e-08f;
    float u2 = u * u;
    float p = -2.5052108385e-08f;
    p = p * u2 + 2.7557319224e-06f;
    p = p * u2 - 1.9841269841e-04f;
    p = p * u2 + 8.3333333333e-03f;
    p = p * u2 - 1.6666666667e-01f;
    float s = u + u * u2 * p;
    return s * s;
}

/* DynamicQuantizeLinear's rule: the range always holds 0, the zero point is rounded half to
   even and clipped, each value is rounded half to even and saturated. */
static void quantization(float lo, float hi, float *scale, float *zero) {
    *scale = (hi - lo) / 255.f;
    if (*scale == 0.f) *scale = 1.f;
    float z = rintf(-lo / *scale);
    *zero = z < 0.f ? 0.f : (z > 255.f ? 255.f : z);
}

/* Saturated with fminf and fmaxf, which compile to vector min and max: written as comparisons,
   the clamp compiles to byte-wise compares and blends (docs/kokoro.md, "Fused operators", has
   what they cost). */
static inline uint8_t quantize(float v, float scale, float zero) {
    float q = fminf(fmaxf(rintf(v / scale) + zero, 0.f), 255.f);
    return (uint8_t)(int32_t)q;
}

/* Transposes between [C, T] and [T, C] go through 8 x 8 blocks held in registers: eight
   contiguous rows in, eight shuffled rows out. Written element by element, the strided side
   compiles to scalar loads. GCC's vector types, so that each target_clones copy gets its own
   instructions. */
typedef float f8 __attribute__((vector_size(32)));
typedef int32_t i8 __attribute__((vector_size(32)));
/* Blocks go channel block by channel block over a span of SPAN steps, then the next span, so
   that eight channel rows are read or written a few cache lines at a time while the span's
   [T, C] side stays in cache; a block order that crosses all channels at each step keeps every
   channel row open at once (docs/kokoro.md, "Fused operators"). */
enum { SPAN = 128 };

static inline __attribute__((always_inline)) void transpose8(f8 r[8]) {
    f8 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], (i8){0, 8, 1, 9, 4, 12, 5, 13});
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], (i8){2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int i = 0; i < 8; i += 4)
        for (int k = 0; k < 2; k++) {
            const i8 low = {0, 1, 8, 9, 4, 5, 12, 13}, high = {2, 3, 10, 11, 6, 7, 14, 15};
            u[i + 2 * k] = __builtin_shuffle(t[i + k], t[i + k + 2], low);
            u[i + 2 * k + 1] = __builtin_shuffle(t[i + k], t[i + k + 2], high);
        }
    for (int i = 0; i < 4; i++) {
        r[i] = __builtin_shuffle(u[i], u[i + 4], (i8){0, 1, 2, 3, 8, 9, 10, 11});
        r[i + 4] = __builtin_shuffle(u[i], u[i + 4], (i8){4, 5, 6, 7, 12, 13, 14, 15});
    }
}

/* z [C, T] quantized into q [T, C]. */
static inline __attribute__((always_inline)) void quantize_transposed(
    const float *restrict z, int64_t C, int64_t T, float scale, float zero, uint8_t *restrict q) {
    int64_t T8 = T & ~(int64_t)7, C8 = C & ~(int64_t)7;
    for (int64_t span = 0; span < T8; span += SPAN)
        for (int64_t c0 = 0; c0 < C8; c0 += 8)
            for (int64_t t0 = span; t0 < T8 && t0 < span + SPAN; t0 += 8) {
                f8 r[8];
                for (int j = 0; j < 8; j++) memcpy(&r[j], z + (c0 + j) * T + t0, sizeof(f8));
                transpose8(r);
                for (int i = 0; i < 8; i++) {
                    uint8_t *restrict row = q + (t0 + i) * C + c0;
                    for (int l = 0; l < 8; l++) row[l] = quantize(r[i][l], scale, zero);
                }
            }
    for (int64_t c = 0; c < C; c++)  /* the edges: channels past C8, steps past T8 */
        for (int64_t t = c < C8 ? T8 : 0; t < T; t++)
            q[t * C + c] = quantize(z[c * T + t], scale, zero);
}

/* x [C, T] channels first; z: C * T floats of scratch; q written [T, C]. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void ada_snake_quant(const float *restrict x, int64_t C, int64_t T,
                            const float *restrict gain, int64_t gains,
                            const float *restrict beta, int64_t betas,
                            const float *restrict alpha, const float *restrict inv_alpha,
                            float eps, float *restrict z, uint8_t *restrict q,
                            float *scale_out, uint8_t *zero_out) {
    float lo = 0.f, hi = 0.f;
    for (int64_t c = 0; c < C; c++) {
        const float *restrict r = x + c * T;
        /* Sums in double: over thousands of steps a float sum loses the digits that decide
           which 8-bit code a value near a boundary gets. */
        double sum = 0.0;
        for (int64_t t = 0; t < T; t++) sum += r[t];
        float mean = (float)(sum / (double)T);
        double squares = 0.0;
        for (int64_t t = 0; t < T; t++) {
            float d = r[t] - mean;
            squares += (double)(d * d);
        }
        float k = gain[gains == 1 ? 0 : c] / sqrtf((float)(squares / (double)T) + eps);
        float b = beta[betas == 1 ? 0 : c], a = alpha[c], ia = inv_alpha[c];
        float *restrict w = z + c * T;
        float l = 0.f, h = 0.f;
        for (int64_t t = 0; t < T; t++) {
            float y = (r[t] - mean) * k + b;
            float o = y + ia * sin2(a * y);
            w[t] = o;
            l = o < l ? o : l;
            h = o > h ? o : h;
        }
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    float scale, zero;
    quantization(lo, hi, &scale, &zero);
    *scale_out = scale;
    *zero_out = (uint8_t)zero;
    quantize_transposed(z, C, T, scale, zero, q);
}

/* x_new [C, T] = (product [T, C] + bias) * pscale, transposed, + x_old [C, T]: a residual
   block's sum. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void residual_sum(const int32_t *restrict p, int64_t T, int64_t C,
                         const int32_t *restrict bias, int64_t biases, float pscale,
                         const float *restrict x_old, float *restrict x_new) {
    int64_t T8 = T & ~(int64_t)7, C8 = C & ~(int64_t)7;
    for (int64_t span = 0; span < T8; span += SPAN)
        for (int64_t c0 = 0; c0 < C8; c0 += 8)
            for (int64_t t0 = span; t0 < T8 && t0 < span + SPAN; t0 += 8) {
                i8 b;
                if (biases == 1) {
                    for (int l = 0; l < 8; l++) b[l] = bias[0];
                } else {
                    memcpy(&b, bias + c0, sizeof(i8));
                }
                f8 r[8];
                for (int i = 0; i < 8; i++) {
                    i8 v;
                    memcpy(&v, p + (t0 + i) * C + c0, sizeof(i8));
                    r[i] = __builtin_convertvector(v + b, f8) * pscale;
                }
                transpose8(r);
                for (int j = 0; j < 8; j++) {
                    f8 old;
                    memcpy(&old, x_old + (c0 + j) * T + t0, sizeof(f8));
                    old = r[j] + old;
                    memcpy(x_new + (c0 + j) * T + t0, &old, sizeof(f8));
                }
            }
    for (int64_t c = 0; c < C; c++) {  /* the edges: channels past C8, steps past T8 */
        int32_t b = bias[biases == 1 ? 0 : c];
        for (int64_t t = c < C8 ? T8 : 0; t < T; t++)
            x_new[c * T + t] = (float)(p[t * C + c] + b) * pscale + x_old[c * T + t];
    }
}

/* product [T, C] channels last; x: T * C floats, stats: 5 * C floats and sums: 2 * C doubles
   of scratch; q [T, C]. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void ada_snake_quant_last(const int32_t *restrict p, int64_t T, int64_t C,
                                 const int32_t *restrict bias, int64_t biases, float pscale,
                                 const float *restrict gain, int64_t gains,
                                 const float *restrict beta, int64_t betas,
                                 const float *restrict alpha, const float *restrict inv_alpha,
                                 float eps, float *restrict x, float *restrict stats,
                                 double *restrict sums, uint8_t *restrict q, float *scale_out,
                                 uint8_t *zero_out) {
    float *restrict mean = stats, *restrict k = stats + C, *restrict b = stats + 2 * C;
    float *restrict lo = stats + 3 * C, *restrict hi = stats + 4 * C;
    /* Sums in double, as in ada_snake_quant. */
    double *restrict total = sums, *restrict squares = sums + C;
    for (int64_t c = 0; c < C; c++) {
        total[c] = squares[c] = 0.0;
        lo[c] = hi[c] = 0.f;
    }
    for (int64_t t = 0; t < T; t++) {
        const int32_t *restrict r = p + t * C;
        float *restrict w = x + t * C;
        if (biases == 1) {
            for (int64_t c = 0; c < C; c++) w[c] = (float)(r[c] + bias[0]) * pscale;
        } else {
            for (int64_t c = 0; c < C; c++) w[c] = (float)(r[c] + bias[c]) * pscale;
        }
        for (int64_t c = 0; c < C; c++) total[c] += w[c];
    }
    for (int64_t c = 0; c < C; c++) mean[c] = (float)(total[c] / (double)T);
    for (int64_t t = 0; t < T; t++) {
        const float *restrict w = x + t * C;
        for (int64_t c = 0; c < C; c++) {
            float d = w[c] - mean[c];
            squares[c] += (double)(d * d);
        }
    }
    for (int64_t c = 0; c < C; c++) {
        k[c] = gain[gains == 1 ? 0 : c] / sqrtf((float)(squares[c] / (double)T) + eps);
        b[c] = beta[betas == 1 ? 0 : c];
    }
    for (int64_t t = 0; t < T; t++) {
        float *restrict w = x + t * C;
        for (int64_t c = 0; c < C; c++) {
            float y = (w[c] - mean[c]) * k[c] + b[c];
            float o = y + inv_alpha[c] * sin2(alpha[c] * y);
            w[c] = o;
            lo[c] = o < lo[c] ? o : lo[c];
            hi[c] = o > hi[c] ? o : hi[c];
        }
    }
    float l = 0.f, h = 0.f;
    for (int64_t c = 0; c < C; c++) {
        l = lo[c] < l ? lo[c] : l;
        h = hi[c] > h ? hi[c] : h;
    }
    float scale, zero;
    quantization(l, h, &scale, &zero);
    *scale_out = scale;
    *zero_out = (uint8_t)zero;
    for (int64_t i = 0; i < T * C; i++) q[i] = quantize(x[i], scale, zero);
}

/* Scratch per thread, grown as needed: a session may run on several threads at once. */
static __thread float *scratch;
static __thread size_t scratch_size;

static float *scratch_of(size_t floats) {
    if (scratch_size < floats) {
        free(scratch);
        scratch = malloc(floats * sizeof(float));
        scratch_size = scratch ? floats : 0;
    }
    return scratch;
}

static int ok(Status *status) {
    if (status == NULL) return 1;
    CALL(RELEASE_STATUS, release_fn, status);
    return 0;
}

/* An input's data, and its element count and first dimensions when asked. */
static const void *input(void *context, size_t index, int64_t *count, int64_t *dims) {
    const void *value = NULL;
    void *data = NULL, *info = NULL;
    if (!ok(CALL(KERNEL_CONTEXT_GET_INPUT, get_input_fn, context, index, &value)) || !value)
        return NULL;
    if (count || dims) {
        int64_t d[8] = {0};
        size_t n = 0;
        if (!ok(CALL(GET_TENSOR_TYPE_AND_SHAPE, shape_fn, value, &info))) return NULL;
        ok(CALL(GET_DIMENSIONS_COUNT, count_fn, info, &n));
        if (n > 8) n = 8;
        ok(CALL(GET_DIMENSIONS, dims_fn, info, d, n));
        CALL(RELEASE_TENSOR_TYPE_AND_SHAPE_INFO, release_fn, info);
        int64_t total = 1;
        for (size_t i = 0; i < n; i++) total *= d[i];
        if (count) *count = total;
        if (dims)
            for (size_t i = 0; i < 8; i++) dims[i] = d[i];
    }
    if (!ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, value, &data))) return NULL;
    return data;
}

/* The three outputs from `first` on: q [1, T, C], its scale and its zero point. */
static int outputs(void *context, size_t first, int64_t T, int64_t C, void **q, void **scale,
                   void **zero) {
    const int64_t dims[3] = {1, T, C};
    void *values[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < 3; i++)
        if (!ok(CALL(KERNEL_CONTEXT_GET_OUTPUT, get_output_fn, context, first + i, dims,
                     i == 0 ? 3 : 0, &values[i])) || !values[i])
            return 0;
    return ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, values[0], q)) &&
           ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, values[1], scale)) &&
           ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, values[2], zero));
}

static void compute_first(void *kernel, void *context) {
    (void)kernel;
    int64_t d[8], gains, betas;
    const float *x = input(context, 0, NULL, d);
    const float *gain = input(context, 1, &gains, NULL), *beta = input(context, 2, &betas, NULL);
    const float *alpha = input(context, 3, NULL, NULL), *inv_alpha = input(context, 4, NULL, NULL);
    const float *eps = input(context, 5, NULL, NULL);
    void *q, *scale, *zero;
    if (!x || !gain || !beta || !alpha || !inv_alpha || !eps) return;
    int64_t C = d[1], T = d[2];
    float *z = scratch_of((size_t)(C * T));
    if (!z || !outputs(context, 0, T, C, &q, &scale, &zero)) return;
    ada_snake_quant(x, C, T, gain, gains, beta, betas, alpha, inv_alpha, *eps, z, q, scale, zero);
}

static void compute_last(void *kernel, void *context) {
    (void)kernel;
    int64_t d[8], biases, gains, betas;
    const int32_t *product = input(context, 0, NULL, d);
    const int32_t *bias = input(context, 1, &biases, NULL);
    const float *pscale = input(context, 2, NULL, NULL);
    const float *gain = input(context, 3, &gains, NULL), *beta = input(context, 4, &betas, NULL);
    const float *alpha = input(context, 5, NULL, NULL), *inv_alpha = input(context, 6, NULL, NULL);
    const float *eps = input(context, 7, NULL, NULL);
    void *q, *scale, *zero;
    if (!product || !bias || !pscale || !gain || !beta || !alpha || !inv_alpha || !eps) return;
    int64_t T = d[0], C = d[1];
    /* 2 * C doubles (4 * C floats) first, keeping them aligned, then 5 * C floats, then x. */
    float *work = scratch_of((size_t)(C * T + 9 * C));
    if (!work || !outputs(context, 0, T, C, &q, &scale, &zero)) return;
    ada_snake_quant_last(product, T, C, bias, biases, *pscale, gain, gains, beta, betas, alpha,
                         inv_alpha, *eps, work + 9 * C, work + 4 * C, (double *)work, q, scale,
                         zero);
}

/* The output x_new [1, C, T] of a ResidualSum or AdaSnakeQuantResidual. */
static float *sum_output(void *context, int64_t C, int64_t T) {
    const int64_t dims[3] = {1, C, T};
    void *value = NULL, *data = NULL;
    if (!ok(CALL(KERNEL_CONTEXT_GET_OUTPUT, get_output_fn, context, 0, dims, 3, &value)) ||
        !value || !ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, value, &data)))
        return NULL;
    return data;
}

static void compute_sum(void *kernel, void *context) {
    (void)kernel;
    int64_t d[8], biases, olds;
    const int32_t *product = input(context, 0, NULL, d);
    const int32_t *bias = input(context, 1, &biases, NULL);
    const float *pscale = input(context, 2, NULL, NULL), *x_old = input(context, 3, &olds, NULL);
    if (!product || !bias || !pscale || !x_old) return;
    int64_t T = d[0], C = d[1];
    /* fused.py puts the operator only where x_old is another block's [1, C, T] sum; left
       without an output, onnxruntime fails the run rather than read past x_old. */
    if (olds != T * C) return;
    float *x_new = sum_output(context, C, T);
    if (x_new) residual_sum(product, T, C, bias, biases, *pscale, x_old, x_new);
}

static void compute_residual(void *kernel, void *context) {
    (void)kernel;
    int64_t d[8], biases, gains, betas;
    const int32_t *product = input(context, 0, NULL, d);
    const int32_t *bias = input(context, 1, &biases, NULL);
    const float *pscale = input(context, 2, NULL, NULL), *x_old = input(context, 3, NULL, NULL);
    const float *gain = input(context, 4, &gains, NULL), *beta = input(context, 5, &betas, NULL);
    const float *alpha = input(context, 6, NULL, NULL), *inv_alpha = input(context, 7, NULL, NULL);
    const float *eps = input(context, 8, NULL, NULL);
    void *q, *scale, *zero;
    if (!product || !bias || !pscale || !x_old || !gain || !beta || !alpha || !inv_alpha || !eps)
        return;
    int64_t T = d[0], C = d[1];
    float *z = scratch_of((size_t)(C * T)), *x_new = z ? sum_output(context, C, T) : NULL;
    if (!x_new || !outputs(context, 1, T, C, &q, &scale, &zero)) return;
    residual_sum(product, T, C, bias, biases, *pscale, x_old, x_new);
    ada_snake_quant(x_new, C, T, gain, gains, beta, betas, alpha, inv_alpha, *eps, z, q, scale,
                    zero);
}

/* rows [T', taps * C] of x [T, C]: one copy of C bytes per tap, or the zero point. */
static void im2col(const uint8_t *restrict x, int64_t T, int64_t C, uint8_t zero, int64_t taps,
                   int64_t dilation, int64_t before, int64_t rows_out, uint8_t *restrict rows) {
    for (int64_t t = 0; t < rows_out; t++)
        for (int64_t j = 0; j < taps; j++) {
            int64_t s = t + j * dilation - before;
            uint8_t *restrict to = rows + (t * taps + j) * C;
            if (s >= 0 && s < T)
                memcpy(to, x + s * C, (size_t)C);
            else
                memset(to, zero, (size_t)C);
        }
}

static void compute_im2col(void *kernel, void *context) {
    (void)kernel;
    int64_t d[8], n = 0;
    const uint8_t *x = input(context, 0, NULL, d), *zero = input(context, 1, NULL, NULL);
    const int64_t *geometry = input(context, 2, &n, NULL);
    void *value = NULL, *rows = NULL;
    if (!x || !zero || !geometry || n != 4) return;
    int64_t T = d[1], C = d[2], taps = geometry[0], dilation = geometry[1];
    int64_t out = T + geometry[2] + geometry[3] - (taps - 1) * dilation;
    const int64_t dims[2] = {out > 0 ? out : 0, taps * C};
    if (!ok(CALL(KERNEL_CONTEXT_GET_OUTPUT, get_output_fn, context, 0, dims, 2, &value)) ||
        !value || !ok(CALL(GET_TENSOR_MUTABLE_DATA, data_fn, value, &rows)))
        return;
    im2col(x, T, C, *zero, taps, dilation, geometry[2], dims[0], rows);
}

static void *create_kernel(const Op *op, const Api *a, const void *info) {
    (void)a;
    (void)info;
    return (void *)op; /* stateless: any non-null pointer */
}
static void destroy(void *kernel) { (void)kernel; }
static const char *cpu(const Op *op) {
    (void)op;
    return NULL; /* the CPU execution provider */
}
static int required(const Op *op, size_t index) {
    (void)op;
    (void)index;
    return 0;
}
static int output_type(const Op *op, size_t index) {
    (void)op;
    return index == 1 ? TYPE_FLOAT : TYPE_UINT8;
}
static size_t three(const Op *op) {
    (void)op;
    return 3;
}

static const char *first_name(const Op *op) {
    (void)op;
    return "AdaSnakeQuant";
}
static int first_input_type(const Op *op, size_t index) {
    (void)op;
    (void)index;
    return TYPE_FLOAT;
}
static size_t first_inputs(const Op *op) {
    (void)op;
    return 6;
}

static const char *last_name(const Op *op) {
    (void)op;
    return "AdaSnakeQuantLast";
}
static int last_input_type(const Op *op, size_t index) {
    (void)op;
    return index <= 1 ? TYPE_INT32 : TYPE_FLOAT;
}
static size_t last_inputs(const Op *op) {
    (void)op;
    return 8;
}

static const char *residual_name(const Op *op) {
    (void)op;
    return "AdaSnakeQuantResidual";
}
static int residual_input_type(const Op *op, size_t index) {
    (void)op;
    return index <= 1 ? TYPE_INT32 : TYPE_FLOAT;
}
static size_t residual_inputs(const Op *op) {
    (void)op;
    return 9;
}
static int residual_output_type(const Op *op, size_t index) {
    (void)op;
    return index == 0 || index == 2 ? TYPE_FLOAT : TYPE_UINT8; /* x_new, q, scale, zero */
}
static size_t four(const Op *op) {
    (void)op;
    return 4;
}

static const char *sum_name(const Op *op) {
    (void)op;
    return "ResidualSum";
}
static int float_output(const Op *op, size_t index) {
    (void)op;
    (void)index;
    return TYPE_FLOAT;
}

static const char *im2col_name(const Op *op) {
    (void)op;
    return "Im2Col";
}
static int im2col_input_type(const Op *op, size_t index) {
    (void)op;
    return index == 2 ? TYPE_INT64 : TYPE_UINT8;
}
static size_t im2col_inputs(const Op *op) {
    (void)op;
    return 3;
}
static int im2col_output_type(const Op *op, size_t index) {
    (void)op;
    (void)index;
    return TYPE_UINT8;
}
static size_t one(const Op *op) {
    (void)op;
    return 1;
}

static const Op first_op = {1, create_kernel, first_name, cpu, first_input_type, first_inputs,
                            output_type, three, compute_first, destroy, required, required};
static const Op last_op = {1, create_kernel, last_name, cpu, last_input_type, last_inputs,
                           output_type, three, compute_last, destroy, required, required};
static const Op residual_op = {1, create_kernel, residual_name, cpu, residual_input_type,
                               residual_inputs, residual_output_type, four, compute_residual,
                               destroy, required, required};
static const Op sum_op = {1, create_kernel, sum_name, cpu, residual_input_type, four,
                          float_output, one, compute_sum, destroy, required, required};
static const Op im2col_op = {1, create_kernel, im2col_name, cpu, im2col_input_type, im2col_inputs,
                             im2col_output_type, one, compute_im2col, destroy, required, required};

typedef Status *(*domain_fn)(const char *, void **);
typedef Status *(*domain_add_fn)(void *, const Op *);
typedef Status *(*add_domain_fn)(void *, void *);

/* onnxruntime's entry point into a custom-op library (SessionOptions.register_custom_ops_library).
   The domain is made once per session options and lives as long as the process. */
__attribute__((visibility("default"))) Status *RegisterCustomOps(void *options, const ApiBase *base) {
    api = base->get_api(1);
    void *domain = NULL;
    Status *status = CALL(CREATE_CUSTOM_OP_DOMAIN, domain_fn, "voxlite", &domain);
    if (status) return status;
    status = CALL(CUSTOM_OP_DOMAIN_ADD, domain_add_fn, domain, &first_op);
    if (status) return status;
    status = CALL(CUSTOM_OP_DOMAIN_ADD, domain_add_fn, domain, &last_op);
    if (status) return status;
    status = CALL(CUSTOM_OP_DOMAIN_ADD, domain_add_fn, domain, &residual_op);
    if (status) return status;
    status = CALL(CUSTOM_OP_DOMAIN_ADD, domain_add_fn, domain, &sum_op);
    if (status) return status;
    status = CALL(CUSTOM_OP_DOMAIN_ADD, domain_add_fn, domain, &im2col_op);
    if (status) return status;
    return CALL(ADD_CUSTOM_OP_DOMAIN, add_domain_fn, options, domain);
}
