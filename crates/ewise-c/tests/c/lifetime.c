/*
 * lifetime.c: object lifetimes and threads through ewise's C ABI, on the device
 * EWISE_C_DEVICE names; built with AddressSanitizer, whose LeakSanitizer checks at exit
 * that everything created here was freed.
 *
 * - Children keep their device alive (as DirectML's COM children do): the device is
 *   released first, then its compiled operator, operators and buffers are used and
 *   released, in several orders.
 * - Create / release loops: devices, operators, compiled operators, buffers, wrapped host
 *   memory (CPU), executions, ewise_sign, ewise_is_infinity and failing calls, a few
 *   hundred times, so that any leak shows up in LeakSanitizer's report.
 * - Threads: several threads executing ONE compiled operator on their own buffers at once
 *   (and reading one shared input buffer), calling ewise_sign / ewise_is_infinity /
 *   ewise_create_operator / ewise_compile_operator on one device at once, each keeping
 *   its own ewise_last_error(); the device released while they run.
 */
#include "check.h"

#include <pthread.h>

#define N 1024u /* elements of the tensors here */

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    return p;
}

/* n FLOAT32 inputs (interesting values) from seed, and SIGN / IS_INFINITY references. */
static void make_f32(uint64_t seed, float *input, float *sign_ref, uint8_t *inf_ref, uint32_t n,
                     EWISE_NAN_POLICY policy)
{
    uint64_t state = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    uint32_t i;
    for (i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)test_interesting_bits(DML_TENSOR_DATA_TYPE_FLOAT32, &state);
        uint32_t s = (uint32_t)ref_sign(DML_TENSOR_DATA_TYPE_FLOAT32, bits, policy);
        memcpy(&input[i], &bits, 4);
        if (sign_ref != NULL) {
            memcpy(&sign_ref[i], &s, 4);
        }
        if (inf_ref != NULL) {
            inf_ref[i] = ref_is_infinity(DML_TENSOR_DATA_TYPE_FLOAT32, bits, DML_IS_INFINITY_MODE_EITHER);
        }
    }
}

typedef struct ops {
    ewise_compiled_operator *sign, *inf;
} ops;

/* SIGN and IS_INFINITY (EITHER) of FLOAT32 [n], compiled on device. */
static ops compile_ops(ewise_device *device, uint32_t n)
{
    test_tensor in, out, out_u8;
    ewise_operator *op = NULL;
    ops o;
    test_tensor_1d(&in, DML_TENSOR_DATA_TYPE_FLOAT32, n);
    test_tensor_1d(&out, DML_TENSOR_DATA_TYPE_FLOAT32, n);
    test_tensor_1d(&out_u8, DML_TENSOR_DATA_TYPE_UINT8, n);
    o.sign = TEST_COMPILE(device, test_create_sign(device, &in, &out, &op), &op);
    o.inf = TEST_COMPILE(device, test_create_is_infinity(device, &in, &out_u8, DML_IS_INFINITY_MODE_EITHER, &op),
                         &op);
    return o;
}

/* ------------------------------------------------------------------------------------ */
/* Children keep their device alive                                                     */
/* ------------------------------------------------------------------------------------ */

static void test_children_outlive_device(int order)
{
    ewise_device *device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    test_tensor in_t, out_t;
    ewise_operator *op = NULL, *spare = NULL;
    ewise_compiled_operator *compiled = NULL;
    ewise_buffer *in = NULL, *out = NULL, *wrapped = NULL;
    float *input = (float *)xmalloc(N * 4), *expected = (float *)xmalloc(N * 4), *got = (float *)xmalloc(N * 4);
    float *host = (float *)xmalloc(N * 4);
    EWISE_BUFFER_BINDING ib, ob;

    make_f32(7 + (uint64_t)order, input, expected, NULL, N, EWISE_NAN_ZERO);
    test_tensor_1d(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, N);
    test_tensor_1d(&out_t, DML_TENSOR_DATA_TYPE_FLOAT32, N);
    if (!CHECK_OK(test_create_sign(device, &in_t, &out_t, &op)) ||
        !CHECK_OK(test_create_sign(device, &in_t, &out_t, &spare)) ||
        !CHECK_OK(ewise_compile_operator(device, op, DML_EXECUTION_FLAG_NONE, &compiled)) ||
        !CHECK_OK(ewise_create_buffer(device, N * 4, &in)) || !CHECK_OK(ewise_create_buffer(device, N * 4, &out))) {
        ewise_release_device(device);
        goto done;
    }
    if (!test_is_gpu()) {
        memcpy(host, input, N * 4);
        CHECK_OK(ewise_wrap_host_memory(device, host, N * 4, &wrapped));
    }
    CHECK_OK(ewise_buffer_write(in, 0, input, N * 4));

    /* the device goes first: every child still works */
    ewise_release_device(device);
    device = NULL;
    ib = test_binding(in, 0, N * 4);
    ob = test_binding(out, 0, N * 4);
    if (order == 1) {
        ewise_release_operator(op); /* the uncompiled operators go before the compiled one runs */
        ewise_release_operator(spare);
        op = spare = NULL;
    }
    memset(got, 0, N * 4);
    if (CHECK_OK(ewise_execute(compiled, &ib, &ob)) && CHECK_OK(ewise_buffer_read(out, 0, got, N * 4))) {
        CHECK(memcmp(got, expected, N * 4) == 0, "order %d: SIGN after the device was released", order);
    }
    if (wrapped != NULL) {
        EWISE_BUFFER_BINDING wb = test_binding(wrapped, 0, N * 4);
        if (CHECK_OK(ewise_execute(compiled, &wb, &wb))) { /* in place, in the caller's memory */
            CHECK(memcmp(host, expected, N * 4) == 0, "order %d: in place on wrapped memory", order);
        }
    }
    switch (order) {
    case 0: /* compiled operator, then buffers (still readable), then operators */
        ewise_release_compiled_operator(compiled);
        compiled = NULL;
        CHECK_OK(ewise_buffer_write(out, 0, input, 16));
        CHECK_OK(ewise_buffer_read(out, 0, got, 16));
        CHECK(memcmp(got, input, 16) == 0, "a buffer outliving device and operator");
        break;
    case 1: /* buffers first, then the compiled operator */
        ewise_release_buffer(in);
        ewise_release_buffer(out);
        ewise_release_buffer(wrapped);
        in = out = wrapped = NULL;
        break;
    default: /* the operators first, then a last execution */
        ewise_release_operator(op);
        ewise_release_operator(spare);
        op = spare = NULL;
        CHECK_OK(ewise_execute(compiled, &ib, &ib));
        break;
    }
done:
    ewise_release_compiled_operator(compiled);
    ewise_release_operator(op);
    ewise_release_operator(spare);
    ewise_release_buffer(in);
    ewise_release_buffer(out);
    ewise_release_buffer(wrapped);
    free(input);
    free(expected);
    free(got);
    free(host); /* the wrapped buffer is gone: the memory is the caller's again */
}

/* ------------------------------------------------------------------------------------ */
/* Create / release loops                                                               */
/* ------------------------------------------------------------------------------------ */

/* Everything once on `device`, released in an order chosen by i; failing calls too. */
static void one_round(ewise_device *device, uint32_t i, EWISE_NAN_POLICY policy)
{
    enum { M = 64 };
    float input[M], sign_ref[M], got[M], host[M];
    uint8_t inf_ref[M], flags[M];
    ops o = compile_ops(device, M);
    ewise_buffer *in = NULL, *out = NULL, *out_u8 = NULL, *wrapped = NULL, *junk = NULL;
    ewise_operator *bad_op = NULL;
    EWISE_BUFFER_BINDING ib = test_binding(NULL, 0, M * 4), ob, ub, bad;
    DML_OPERATOR_DESC bad_desc;

    make_f32(i, input, sign_ref, inf_ref, M, policy);
    if (o.sign == NULL || o.inf == NULL || !CHECK_OK(ewise_create_buffer(device, M * 4, &in)) ||
        !CHECK_OK(ewise_create_buffer(device, M * 4 + 16 * (i % 4), &out)) ||
        !CHECK_OK(ewise_create_buffer(device, M, &out_u8))) {
        goto done;
    }
    CHECK_OK(ewise_buffer_write(in, 0, input, M * 4));
    ib = test_binding(in, 0, M * 4);
    ob = test_binding(out, 16 * (i % 4), M * 4);
    ub = test_binding(out_u8, 0, M);
    if (CHECK_OK(ewise_execute(o.sign, &ib, &ob)) && CHECK_OK(ewise_buffer_read(out, 16 * (i % 4), got, M * 4))) {
        CHECK(memcmp(got, sign_ref, M * 4) == 0, "round %u: SIGN", i);
    }
    if (CHECK_OK(ewise_execute(o.inf, &ib, &ub)) && CHECK_OK(ewise_buffer_read(out_u8, 0, flags, M))) {
        CHECK(memcmp(flags, inf_ref, M) == 0, "round %u: IS_INFINITY", i);
    }
    if (!test_is_gpu()) {
        memcpy(host, input, sizeof host);
        if (CHECK_OK(ewise_wrap_host_memory(device, host, sizeof host, &wrapped))) {
            EWISE_BUFFER_BINDING wb = test_binding(wrapped, 0, M * 4);
            if (CHECK_OK(ewise_execute(o.sign, &wb, &wb))) {
                CHECK(memcmp(host, sign_ref, M * 4) == 0, "round %u: SIGN in place, wrapped", i);
            }
        }
    }
    if (CHECK_OK(ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, input, got, M))) {
        CHECK(memcmp(got, sign_ref, M * 4) == 0, "round %u: ewise_sign", i);
    }
    if (CHECK_OK(ewise_is_infinity(device, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, input, flags, M))) {
        CHECK(memcmp(flags, inf_ref, M) == 0, "round %u: ewise_is_infinity", i);
    }
    /* failures allocate messages: they must not leak either */
    bad = test_binding(in, 8, M * 4);
    CHECK_STATUS(ewise_execute(o.sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ewise_execute(o.inf, &ib, &ib), EWISE_ERROR_INVALID_ARGUMENT);
    bad_desc.Type = (DML_OPERATOR_TYPE)(1000 + i);
    bad_desc.Desc = &bad_desc;
    CHECK_STATUS(ewise_create_operator(device, &bad_desc, &bad_op), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(ewise_create_buffer(device, 0, &junk), EWISE_ERROR_INVALID_ARGUMENT);
    if (i % 64 == 0) { /* (AddressSanitizer prints a warning for each) */
        CHECK_STATUS(ewise_create_buffer(device, UINT64_C(1) << 62, &junk), EWISE_ERROR_OUT_OF_MEMORY);
    }
    CHECK_STATUS(ewise_sign(device, (DML_TENSOR_DATA_TYPE)999, input, got, M), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ewise_buffer_read(in, M * 4, got, 1), EWISE_ERROR_INVALID_ARGUMENT);
done:
    /* release in one of three orders */
    if (i % 3 == 0) {
        ewise_release_compiled_operator(o.sign);
        ewise_release_compiled_operator(o.inf);
    }
    ewise_release_buffer(in);
    ewise_release_buffer(wrapped);
    if (i % 3 == 1) {
        ewise_release_compiled_operator(o.inf);
        ewise_release_compiled_operator(o.sign);
    }
    ewise_release_buffer(out);
    ewise_release_buffer(out_u8);
    if (i % 3 == 2) {
        ewise_release_compiled_operator(o.sign);
        ewise_release_compiled_operator(o.inf);
    }
}

static void test_loops(void)
{
    /* a software GPU creates devices slowly: fewer device rounds there */
    uint32_t device_rounds = test_is_gpu() ? 24u : 200u;
    uint32_t object_rounds = 300u;
    uint32_t i;
    ewise_device *device;
    for (i = 0; i < device_rounds; i++) {
        EWISE_NAN_POLICY policy = (EWISE_NAN_POLICY)(i & 1);
        ewise_device *d = test_device(i % 4 < 2 ? DML_FEATURE_LEVEL_6_4 : DML_FEATURE_LEVEL_3_0, (i >> 1) & 1, policy);
        one_round(d, i, policy);
        if (i % 2 == 0) {
            ewise_release_device(d); /* after its children */
        }
        if (i % 2 == 1) {
            /* before a last child: an operator nobody compiled */
            test_tensor t;
            ewise_operator *op = NULL;
            test_tensor_1d(&t, DML_TENSOR_DATA_TYPE_INT8, 5);
            CHECK_OK(test_create_sign(d, &t, &t, &op));
            ewise_release_device(d);
            ewise_release_operator(op);
        }
    }
    device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_PROPAGATE);
    for (i = 0; i < object_rounds; i++) {
        one_round(device, i, EWISE_NAN_PROPAGATE);
    }
    ewise_release_device(device);
}

/* ------------------------------------------------------------------------------------ */
/* Threads                                                                              */
/* ------------------------------------------------------------------------------------ */

#define THREADS 6

typedef struct worker {
    int id;
    uint32_t iterations;
    ewise_device *device;              /* phase 1 only */
    ewise_compiled_operator *compiled; /* phase 2: SIGN FLOAT32 [N], shared by all */
    ewise_buffer *shared_in;           /* phase 2: one input buffer read by all */
    const float *shared_expected;
    ewise_buffer *in, *out;            /* phase 2: this thread's own */
    int failures;
    char first_failure[512];
} worker;

static void worker_fail(worker *w, const char *what, unsigned iteration)
{
    if (w->failures++ == 0) {
        snprintf(w->first_failure, sizeof w->first_failure, "thread %d iteration %u: %s (last error \"%s\")",
                 w->id, iteration, what, ewise_last_error());
    }
}

/* Phase 1: one device, many callers: host calls, operator creation and compilation, and
 * each thread's own failures and messages. */
static void *phase1(void *arg)
{
    worker *w = (worker *)arg;
    float input[N], sign_ref[N], got[N];
    uint8_t inf_ref[N], flags[N];
    uint32_t it;
    for (it = 0; it < w->iterations; it++) {
        char number[32];
        DML_OPERATOR_DESC bad;
        ewise_operator *op = NULL;
        ops o;
        make_f32((uint64_t)w->id * 1000 + it, input, sign_ref, inf_ref, N, EWISE_NAN_ZERO);
        if (ewise_sign(w->device, DML_TENSOR_DATA_TYPE_FLOAT32, input, got, N) != EWISE_OK ||
            memcmp(got, sign_ref, sizeof got) != 0) {
            worker_fail(w, "ewise_sign", it);
        }
        if (ewise_is_infinity(w->device, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, input, flags, N) !=
                EWISE_OK ||
            memcmp(flags, inf_ref, sizeof flags) != 0) {
            worker_fail(w, "ewise_is_infinity", it);
        }
        /* its own failure, its own message */
        bad.Type = (DML_OPERATOR_TYPE)(200000 + w->id * 1000 + (int)it);
        bad.Desc = &bad;
        snprintf(number, sizeof number, "%d", 200000 + w->id * 1000 + (int)it);
        if (ewise_create_operator(w->device, &bad, &op) != EWISE_ERROR_NOT_SUPPORTED ||
            strstr(ewise_last_error(), number) == NULL) {
            worker_fail(w, "a failure's message on this thread", it);
        }
        if (it % 4 == 0) {
            o = compile_ops(w->device, N);
            if (o.sign == NULL || o.inf == NULL) {
                worker_fail(w, "create and compile on a shared device", it);
            }
            ewise_release_compiled_operator(o.sign);
            ewise_release_compiled_operator(o.inf);
        }
    }
    return NULL;
}

/* Phase 2: one compiled operator, executed by every thread at once on its own buffers,
 * and on one shared input buffer. */
static void *phase2(void *arg)
{
    worker *w = (worker *)arg;
    float *input = (float *)xmalloc(N * 4), *expected = (float *)xmalloc(N * 4), *got = (float *)xmalloc(N * 4);
    uint32_t it;
    for (it = 0; it < w->iterations; it++) {
        EWISE_BUFFER_BINDING ib, ob;
        make_f32((uint64_t)w->id * 7777 + it, input, expected, NULL, N, EWISE_NAN_ZERO);
        ob = test_binding(w->out, 0, N * 4);
        if (it % 2 == 0) {
            ib = test_binding(w->in, 0, N * 4);
            if (ewise_buffer_write(w->in, 0, input, N * 4) != EWISE_OK) {
                worker_fail(w, "ewise_buffer_write", it);
                continue;
            }
        } else {
            ib = test_binding(w->shared_in, 0, N * 4);
            memcpy(expected, w->shared_expected, N * 4);
        }
        if (ewise_execute(w->compiled, &ib, &ob) != EWISE_OK) {
            worker_fail(w, "ewise_execute", it);
            continue;
        }
        if (ewise_last_error()[0] != '\0') {
            worker_fail(w, "EWISE_OK left a message", it);
        }
        if (ewise_buffer_read(w->out, 0, got, N * 4) != EWISE_OK || memcmp(got, expected, N * 4) != 0) {
            worker_fail(w, "SIGN result of a concurrent execution", it);
        }
    }
    free(input);
    free(expected);
    free(got);
    return NULL;
}

static void run_threads(void *(*fn)(void *), worker *workers, const char *phase, void (*meanwhile)(void *),
                        void *meanwhile_arg)
{
    pthread_t threads[THREADS];
    int started[THREADS];
    int t;
    for (t = 0; t < THREADS; t++) {
        started[t] = pthread_create(&threads[t], NULL, fn, &workers[t]) == 0;
        CHECK(started[t], "%s: pthread_create %d", phase, t);
    }
    if (meanwhile != NULL) {
        meanwhile(meanwhile_arg);
    }
    for (t = 0; t < THREADS; t++) {
        if (started[t]) {
            pthread_join(threads[t], NULL);
        }
        CHECK(workers[t].failures == 0, "%s: %d failure(s), the first: %s", phase, workers[t].failures,
              workers[t].first_failure);
    }
}

static void release_device_meanwhile(void *arg)
{
    ewise_release_device((ewise_device *)arg); /* its compiled operator and buffers are in use */
}

static void test_threads(void)
{
    worker workers[THREADS];
    ewise_device *device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    ops o;
    ewise_buffer *shared_in = NULL;
    float *shared_input = (float *)xmalloc(N * 4), *shared_expected = (float *)xmalloc(N * 4);
    uint32_t iterations = test_is_gpu() ? 8u : 40u;
    int t;

    memset(workers, 0, sizeof workers);
    for (t = 0; t < THREADS; t++) {
        workers[t].id = t;
        workers[t].iterations = iterations;
        workers[t].device = device;
    }
    run_threads(phase1, workers, "one device, several threads", NULL, NULL);

    o = compile_ops(device, N);
    make_f32(424242, shared_input, shared_expected, NULL, N, EWISE_NAN_ZERO);
    if (o.sign == NULL || !CHECK_OK(ewise_create_buffer(device, N * 4, &shared_in)) ||
        !CHECK_OK(ewise_buffer_write(shared_in, 0, shared_input, N * 4))) {
        ewise_release_device(device);
        goto done;
    }
    for (t = 0; t < THREADS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].id = t;
        workers[t].iterations = iterations * 2;
        workers[t].compiled = o.sign;
        workers[t].shared_in = shared_in;
        workers[t].shared_expected = shared_expected;
        CHECK_OK(ewise_create_buffer(device, N * 4, &workers[t].in));
        CHECK_OK(ewise_create_buffer(device, N * 4, &workers[t].out));
    }
    run_threads(phase2, workers, "one compiled operator, several threads", release_device_meanwhile, device);
    for (t = 0; t < THREADS; t++) {
        ewise_release_buffer(workers[t].in);
        ewise_release_buffer(workers[t].out);
    }
done:
    ewise_release_buffer(shared_in);
    ewise_release_compiled_operator(o.sign);
    ewise_release_compiled_operator(o.inf);
    free(shared_input);
    free(shared_expected);
}

/* ------------------------------------------------------------------------------------ */

int main(void)
{
    int order;
    printf("lifetime: device %s\n", test_kind_name());
    for (order = 0; order < 3; order++) {
        test_children_outlive_device(order);
    }
    test_loops();
    test_threads();
    return check_finish("lifetime");
}
