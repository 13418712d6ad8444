/*
 * errors.c: every error path of ewise's C ABI (issue 24's list and ewise.h's Returns
 * sections), on the device EWISE_C_DEVICE names.
 *
 * Each bad call must return its status AND leave a non-empty message in
 * ewise_last_error(); the next call that returns EWISE_OK must leave "" there. A failed
 * call writes no out-pointer and no output. Also: ewise_status_hresult for every status,
 * ewise_version against the macros, ewise_last_error per thread, releasing NULL, and
 * ewise_check_feature_support's answers for every level and data type.
 */
#include "check.h"

#include <pthread.h>

static ewise_device *g_dev;       /* 6_4, strict, NaN zero: the kind under test */
static ewise_device *g_other;     /* another device of the same kind */
static ewise_device *g_ext;       /* 6_4 with Extensions = 1 */

/* A cheap call that succeeds: after it ewise_last_error() must be "". */
static EWISE_STATUS ok_call(void)
{
    DML_FEATURE_LEVEL levels[1] = {DML_FEATURE_LEVEL_1_0};
    DML_FEATURE_QUERY_FEATURE_LEVELS query;
    DML_FEATURE_DATA_FEATURE_LEVELS data;
    query.RequestedFeatureLevelCount = 1;
    query.RequestedFeatureLevels = levels;
    return ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof query, &query,
                                       sizeof data, &data);
}

/* The call fails with `want` and a message; then a successful call clears the message. */
#define EXPECT(expr, want)                                                                 \
    do {                                                                                   \
        CHECK_STATUS(expr, want);                                                          \
        CHECK_OK(ok_call());                                                               \
    } while (0)

/* An address that is no object of ewise's, to see that a failed call leaves an
 * out-pointer alone. */
static char sentinel_storage[16];
#define SENTINEL(type) ((type *)(void *)sentinel_storage)

static int32_t hresult(uint32_t value)
{
    return (int32_t)((int64_t)value - INT64_C(0x100000000));
}

/* ------------------------------------------------------------------------------------ */

static void test_version_and_hresults(void)
{
    char expected[64];
    const char *version = ewise_version();
    snprintf(expected, sizeof expected, "%d.%d.%d", EWISE_VERSION_MAJOR, EWISE_VERSION_MINOR,
             EWISE_VERSION_PATCH);
    CHECK(version != NULL, "ewise_version() is NULL");
    if (version != NULL) {
        CHECK(strcmp(version, expected) == 0, "ewise_version() \"%s\" is not the macros' \"%s\"", version,
              expected);
        CHECK(strcmp(version, EWISE_VERSION_STRING) == 0, "ewise_version() \"%s\" is not EWISE_VERSION_STRING \"%s\"",
              version, EWISE_VERSION_STRING);
        CHECK(version == ewise_version(), "ewise_version() is not one static string");
    }
    CHECK(ewise_status_hresult(EWISE_OK) == 0, "OK -> %" PRId32, ewise_status_hresult(EWISE_OK));
    CHECK(ewise_status_hresult(EWISE_ERROR_INVALID_ARGUMENT) == hresult(0x80070057u), "INVALID_ARGUMENT -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult(EWISE_ERROR_INVALID_ARGUMENT));
    CHECK(ewise_status_hresult(EWISE_ERROR_NOT_SUPPORTED) == hresult(0x887A0004u), "NOT_SUPPORTED -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult(EWISE_ERROR_NOT_SUPPORTED));
    CHECK(ewise_status_hresult(EWISE_ERROR_OUT_OF_MEMORY) == hresult(0x8007000Eu), "OUT_OF_MEMORY -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult(EWISE_ERROR_OUT_OF_MEMORY));
    CHECK(ewise_status_hresult(EWISE_ERROR_DEVICE_UNAVAILABLE) == hresult(0x887A0005u),
          "DEVICE_UNAVAILABLE -> 0x%08" PRIx32, (uint32_t)ewise_status_hresult(EWISE_ERROR_DEVICE_UNAVAILABLE));
    CHECK(ewise_status_hresult(EWISE_ERROR_INTERNAL) == hresult(0x80004005u), "INTERNAL -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult(EWISE_ERROR_INTERNAL));
    CHECK(ewise_status_hresult((EWISE_STATUS)6) == hresult(0x80070057u), "status 6 -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult((EWISE_STATUS)6));
    CHECK(ewise_status_hresult((EWISE_STATUS)999) == hresult(0x80070057u), "status 999 -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult((EWISE_STATUS)999));
    CHECK(ewise_status_hresult((EWISE_STATUS)0xFFFFFFFFu) == hresult(0x80070057u), "status 0xFFFFFFFF -> 0x%08" PRIx32,
          (uint32_t)ewise_status_hresult((EWISE_STATUS)0xFFFFFFFFu));
    CHECK(ewise_status_hresult(EWISE_ERROR_INVALID_ARGUMENT) < 0, "HRESULTs of failures are negative");
}

/* Functions that return no status leave the message alone. */
static void test_message_kept(void)
{
    char before[4096];
    ewise_buffer *buffer = SENTINEL(ewise_buffer);
    CHECK_STATUS(ewise_create_buffer(g_dev, 0, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK(buffer == SENTINEL(ewise_buffer), "a failed ewise_create_buffer wrote its out-pointer");
    strcpy(before, check_message());
    (void)ewise_version();
    (void)ewise_status_hresult(EWISE_ERROR_INTERNAL);
    ewise_release_device(NULL);
    ewise_release_operator(NULL);
    ewise_release_compiled_operator(NULL);
    ewise_release_buffer(NULL);
    (void)ewise_last_error();
    CHECK(ewise_last_error() != NULL && strcmp(ewise_last_error(), before) == 0,
          "the message changed (\"%s\" -> \"%s\") across calls that return no status", before,
          ewise_last_error() ? ewise_last_error() : "(NULL)");
    CHECK_OK(ok_call());
}

/* ------------------------------------------------------------------------------------ */

static void test_create_device(void)
{
    static const DML_FEATURE_LEVEL all_levels[] = {
        DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
        DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0,
        DML_FEATURE_LEVEL_5_1, DML_FEATURE_LEVEL_5_2, DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1,
        DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};
    EWISE_DEVICE_DESC desc = test_device_desc(test_kind(), DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    ewise_device *device = SENTINEL(ewise_device);
    size_t i;

    EXPECT(ewise_create_device(NULL, &device), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_device(&desc, NULL), EWISE_ERROR_INVALID_ARGUMENT);

    desc.Kind = (EWISE_DEVICE_KIND)5;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.Kind = (EWISE_DEVICE_KIND)0xFFFFFFFFu;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.Kind = test_kind();

    desc.FeatureLevel = (DML_FEATURE_LEVEL)0x1234;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.FeatureLevel = (DML_FEATURE_LEVEL)0x6500; /* a level after 6_4 */
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.FeatureLevel = (DML_FEATURE_LEVEL)0x6401;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.FeatureLevel = DML_FEATURE_LEVEL_6_4;

    desc.Extensions = 2;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.Extensions = 0;
    desc.NanPolicy = (EWISE_NAN_POLICY)2;
    EXPECT(ewise_create_device(&desc, &device), EWISE_ERROR_INVALID_ARGUMENT);
    desc.NanPolicy = EWISE_NAN_ZERO;
    CHECK(device == SENTINEL(ewise_device), "a failed ewise_create_device wrote its out-pointer");

    /* every one of the 15 levels, both rule sets, both policies */
    for (i = 0; i < sizeof all_levels / sizeof all_levels[0]; i++) {
        ewise_device *d = NULL;
        desc.FeatureLevel = all_levels[i];
        desc.Extensions = (uint32_t)(i & 1);
        desc.NanPolicy = (EWISE_NAN_POLICY)((i >> 1) & 1);
        if (CHECK_OK(ewise_create_device(&desc, &d))) {
            CHECK(d != NULL, "level 0x%x: EWISE_OK and no device", (unsigned)all_levels[i]);
        }
        ewise_release_device(d);
    }
}

/* ------------------------------------------------------------------------------------ */

static EWISE_STATUS query_levels(ewise_device *device, uint32_t count, const DML_FEATURE_LEVEL *levels,
                                 DML_FEATURE_LEVEL *answer)
{
    DML_FEATURE_QUERY_FEATURE_LEVELS query;
    DML_FEATURE_DATA_FEATURE_LEVELS data;
    EWISE_STATUS status;
    query.RequestedFeatureLevelCount = count;
    query.RequestedFeatureLevels = levels;
    data.MaxSupportedFeatureLevel = (DML_FEATURE_LEVEL)0xDEAD;
    status = ewise_check_feature_support(device, DML_FEATURE_FEATURE_LEVELS, sizeof query, &query,
                                         sizeof data, &data);
    *answer = data.MaxSupportedFeatureLevel;
    return status;
}

static EWISE_STATUS query_type(ewise_device *device, uint32_t type, int32_t *supported)
{
    DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT query;
    DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT data;
    EWISE_STATUS status;
    query.DataType = (DML_TENSOR_DATA_TYPE)type;
    data.IsSupported = 77;
    status = ewise_check_feature_support(device, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof query,
                                         &query, sizeof data, &data);
    *supported = data.IsSupported;
    return status;
}

/*
 * What docs/SEMANTICS.md section 3 (strict) and ewise.h (Extensions = 1) say SIGN or
 * IS_INFINITY accepts, as an input or an output, at `level`: 1, 0, or -1 where the
 * documents leave it open (64-bit integers with Extensions below 4_1).
 */
static int expected_type_support(uint32_t level, int extensions, uint32_t type)
{
    int sign = 0, is_inf = 0;
    if (type == 12 || type == 13) {
        return 0; /* UINT4, INT4: nothing here accepts them */
    }
    if (type == 1001) {
        return extensions && level >= 0x2100; /* BOOL: IS_INFINITY's output, from 2_1 */
    }
    if (level >= 0x2000) { /* SIGN from 2_0 */
        if (type == DML_TENSOR_DATA_TYPE_FLOAT32 || type == DML_TENSOR_DATA_TYPE_FLOAT16) {
            sign = 1;
        }
        if (extensions && (type == DML_TENSOR_DATA_TYPE_FLOAT64 || type == 1000)) {
            sign = 1;
        }
        if (level >= 0x2100 || extensions) {
            switch (type) {
            case DML_TENSOR_DATA_TYPE_INT32: case DML_TENSOR_DATA_TYPE_INT16:
            case DML_TENSOR_DATA_TYPE_INT8: case DML_TENSOR_DATA_TYPE_UINT32:
            case DML_TENSOR_DATA_TYPE_UINT16: case DML_TENSOR_DATA_TYPE_UINT8:
                sign = 1;
                break;
            default:
                break;
            }
        }
        if (type == DML_TENSOR_DATA_TYPE_INT64 || type == DML_TENSOR_DATA_TYPE_UINT64) {
            if (level >= 0x4100) {
                sign = 1;
            } else if (extensions) {
                return -1;
            }
        }
    }
    if (level >= 0x2100) { /* IS_INFINITY from 2_1 */
        if (type == DML_TENSOR_DATA_TYPE_FLOAT32 || type == DML_TENSOR_DATA_TYPE_FLOAT16) {
            is_inf = 1;
        }
        if (extensions && (type == DML_TENSOR_DATA_TYPE_FLOAT64 || (type >= 1000 && type <= 1005))) {
            is_inf = 1;
        }
    }
    return sign || is_inf;
}

static void test_check_feature_support(void)
{
    static const DML_FEATURE_LEVEL all_levels[] = {
        DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
        DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0,
        DML_FEATURE_LEVEL_5_1, DML_FEATURE_LEVEL_5_2, DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1,
        DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};
    DML_FEATURE_QUERY_FEATURE_LEVELS lq;
    DML_FEATURE_DATA_FEATURE_LEVELS ld;
    DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT tq;
    DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT td;
    DML_FEATURE_LEVEL some[4] = {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_4_1,
                                 DML_FEATURE_LEVEL_6_4};
    DML_FEATURE_LEVEL bad[2] = {DML_FEATURE_LEVEL_3_0, (DML_FEATURE_LEVEL)0x1234};
    DML_FEATURE_LEVEL answer;
    int32_t supported;
    size_t l, e;
    uint32_t t;
    ewise_device *at_2_0, *at_4_1;

    lq.RequestedFeatureLevelCount = 4;
    lq.RequestedFeatureLevels = some;
    tq.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;

    /* NULLs, features, sizes */
    EXPECT(ewise_check_feature_support(NULL, DML_FEATURE_FEATURE_LEVELS, sizeof lq, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq, NULL, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq, &lq, sizeof ld, NULL),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof tq, NULL, sizeof td, &td),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof tq, &tq, sizeof td, NULL),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, (DML_FEATURE)2, sizeof lq, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, (DML_FEATURE)0xFFFFFFFFu, sizeof tq, &tq, sizeof td, &td),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq - 1, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq + 8, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, 0, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq, &lq, sizeof ld + 4, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof lq, &lq, 0, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    /* the other feature's struct sizes */
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_FEATURE_LEVELS, sizeof tq, &lq, sizeof ld, &ld),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof lq, &tq, sizeof td, &td),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof tq, &tq, sizeof td + 4, &td),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_check_feature_support(g_dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof tq - 1, &tq, sizeof td, &td),
           EWISE_ERROR_INVALID_ARGUMENT);

    /* FEATURE_LEVELS queries */
    EXPECT(query_levels(g_dev, 0, some, &answer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_levels(g_dev, 2, NULL, &answer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_levels(g_dev, 2, bad, &answer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_levels(g_dev, 1, bad + 1, &answer), EWISE_ERROR_INVALID_ARGUMENT);

    at_2_0 = test_device(DML_FEATURE_LEVEL_2_0, 0, EWISE_NAN_ZERO);
    at_4_1 = test_device(DML_FEATURE_LEVEL_4_1, 0, EWISE_NAN_ZERO);
    {
        DML_FEATURE_LEVEL above[2] = {DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_4_0};
        EXPECT(query_levels(at_2_0, 2, above, &answer), EWISE_ERROR_NOT_SUPPORTED);
    }
    /* the two real answers: the device's own level, or the highest one asked at or below it */
    if (CHECK_OK(query_levels(g_dev, 4, some, &answer))) {
        CHECK(answer == DML_FEATURE_LEVEL_6_4, "6_4 device, {1_0,3_0,4_1,6_4}: 0x%x", (unsigned)answer);
    }
    if (CHECK_OK(query_levels(at_4_1, 4, some, &answer))) {
        CHECK(answer == DML_FEATURE_LEVEL_4_1, "4_1 device, {1_0,3_0,4_1,6_4}: 0x%x", (unsigned)answer);
    }
    {
        DML_FEATURE_LEVEL unsorted[3] = {DML_FEATURE_LEVEL_6_4, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_3_1};
        DML_FEATURE_LEVEL below[2] = {DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_4_0};
        if (CHECK_OK(query_levels(at_4_1, 3, unsorted, &answer))) {
            CHECK(answer == DML_FEATURE_LEVEL_3_1, "4_1 device, {6_4,2_0,3_1}: 0x%x", (unsigned)answer);
        }
        if (CHECK_OK(query_levels(at_4_1, 2, below, &answer))) {
            CHECK(answer == DML_FEATURE_LEVEL_4_0, "4_1 device, {5_0,4_0}: 0x%x", (unsigned)answer);
        }
        if (CHECK_OK(query_levels(at_2_0, 3, unsorted, &answer))) {
            CHECK(answer == DML_FEATURE_LEVEL_2_0, "2_0 device, {6_4,2_0,3_1}: 0x%x", (unsigned)answer);
        }
    }
    ewise_release_device(at_2_0);
    ewise_release_device(at_4_1);

    /* TENSOR_DATA_TYPE_SUPPORT: values that are no data type */
    EXPECT(query_type(g_dev, 0, &supported), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_type(g_dev, 14, &supported), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_type(g_dev, 999, &supported), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_type(g_dev, 1006, &supported), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(query_type(g_dev, 0xFFFFFFFFu, &supported), EWISE_ERROR_INVALID_ARGUMENT);
    /* ... and the answer for every level, both rule sets, every data type */
    for (l = 0; l < sizeof all_levels / sizeof all_levels[0]; l++) {
        for (e = 0; e < 2; e++) {
            ewise_device *d = test_device(all_levels[l], (uint32_t)e, EWISE_NAN_ZERO);
            for (t = 1; t <= 1005; t = t == 13 ? 1000 : t + 1) {
                int want = expected_type_support(all_levels[l], (int)e, t);
                if (CHECK_OK(query_type(d, t, &supported))) {
                    CHECK(supported == 0 || supported == 1, "IsSupported is a BOOL: %d", (int)supported);
                    CHECK(want < 0 || supported == want,
                          "level 0x%x extensions %d: data type %s (%u): IsSupported %d, expected %d",
                          (unsigned)all_levels[l], (int)e, test_type_name((DML_TENSOR_DATA_TYPE)t), t,
                          (int)supported, want);
                }
            }
            ewise_release_device(d);
        }
    }
}

/* ------------------------------------------------------------------------------------ */

/* A valid SIGN FLOAT32 {2,3} and IS_INFINITY FLOAT32 -> UINT8 {2,3} to break field by field. */
typedef struct fixture {
    test_tensor in, out, out_u8;
    DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign;
    DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC inf;
    DML_OPERATOR_DESC sign_op, inf_op;
} fixture;

static void fixture_init(fixture *f, DML_TENSOR_DATA_TYPE type, uint32_t dims, const uint32_t *sizes)
{
    test_tensor_init(&f->in, type, dims, sizes, NULL);
    test_tensor_init(&f->out, type, dims, sizes, NULL);
    test_tensor_init(&f->out_u8, DML_TENSOR_DATA_TYPE_UINT8, dims, sizes, NULL);
    f->sign.InputTensor = &f->in.desc;
    f->sign.OutputTensor = &f->out.desc;
    f->inf.InputTensor = &f->in.desc;
    f->inf.OutputTensor = &f->out_u8.desc;
    f->inf.InfinityMode = DML_IS_INFINITY_MODE_EITHER;
    f->sign_op.Type = DML_OPERATOR_ELEMENT_WISE_SIGN;
    f->sign_op.Desc = &f->sign;
    f->inf_op.Type = DML_OPERATOR_ELEMENT_WISE_IS_INFINITY;
    f->inf_op.Desc = &f->inf;
}

static const uint32_t SIZES_2x3[2] = {2, 3};
static const uint32_t SIZES_4D[4] = {1, 2, 3, 4};

/* Creates (and releases) the operator; the status. */
static EWISE_STATUS create(ewise_device *device, const DML_OPERATOR_DESC *desc)
{
    ewise_operator *op = SENTINEL(ewise_operator);
    EWISE_STATUS status = ewise_create_operator(device, desc, &op);
    if (status == EWISE_OK) {
        /* take the message ("") now: the checks below look at it */
        CHECK(op != NULL && op != SENTINEL(ewise_operator), "EWISE_OK and no operator");
        if (op != SENTINEL(ewise_operator)) {
            ewise_release_operator(op);
        }
    } else {
        CHECK(op == SENTINEL(ewise_operator), "a failed ewise_create_operator wrote its out-pointer");
    }
    return status;
}

/* create() on the 4-D FLOAT32 fixture with both tensors of `type`, on `device`. */
static EWISE_STATUS create_sign_4d(ewise_device *device, DML_TENSOR_DATA_TYPE type)
{
    fixture f;
    fixture_init(&f, type, 4, SIZES_4D);
    return create(device, &f.sign_op);
}

static EWISE_STATUS create_inf_4d(ewise_device *device, DML_TENSOR_DATA_TYPE type)
{
    fixture f;
    fixture_init(&f, type, 4, SIZES_4D);
    return create(device, &f.inf_op);
}

static void test_create_operator(void)
{
    fixture f;
    ewise_operator *op = SENTINEL(ewise_operator);
    uint32_t big[8] = {65536, 65536, 65536, 65536, 1, 1, 1, 1};
    uint32_t huge[8] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                        0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    uint32_t strides[8];
    ewise_device *d1_0, *d2_0, *d2_1, *d4_0, *d4_1;

    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    CHECK_OK(create(g_dev, &f.sign_op));
    CHECK_OK(create(g_dev, &f.inf_op));

    /* NULL pointers */
    EXPECT(ewise_create_operator(NULL, &f.sign_op, &op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_operator(g_dev, NULL, &op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_operator(g_dev, &f.sign_op, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK(op == SENTINEL(ewise_operator), "a failed ewise_create_operator wrote its out-pointer");
    f.sign_op.Desc = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.inf_op.Desc = NULL;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.sign.InputTensor = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.sign.OutputTensor = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.inf.InputTensor = NULL;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.inf.OutputTensor = NULL;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.desc.Desc = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out_u8.desc.Desc = NULL;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.buffer.Sizes = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out.buffer.Sizes = NULL;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);

    /* tensor type */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.desc.Type = DML_TENSOR_TYPE_INVALID;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.desc.Type = (DML_TENSOR_TYPE)2;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out_u8.desc.Type = DML_TENSOR_TYPE_INVALID;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);

    /* data types that are no data type */
    {
        static const uint32_t not_types[] = {0, 14, 999, 1006, 0xFFFFFFFFu};
        size_t i;
        for (i = 0; i < sizeof not_types / sizeof not_types[0]; i++) {
            fixture_init(&f, (DML_TENSOR_DATA_TYPE)not_types[i], 2, SIZES_2x3);
            f.in.buffer.TotalTensorSizeInBytes = 64;
            f.out.buffer.TotalTensorSizeInBytes = 64;
            EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
            EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
            EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
            fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
            f.out_u8.buffer.DataType = (DML_TENSOR_DATA_TYPE)not_types[i];
            EXPECT(create(g_ext, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
        }
        fixture_init(&f, (DML_TENSOR_DATA_TYPE)999, 2, SIZES_2x3);
        f.in.buffer.TotalTensorSizeInBytes = 64;
        f.out.buffer.TotalTensorSizeInBytes = 64;
        if (CHECK_STATUS(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT)) {
            CHECK_MESSAGE_HAS("999");
        }
    }

    /* flags */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.buffer.Flags = (DML_TENSOR_FLAGS)0x80;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.buffer.Flags = (DML_TENSOR_FLAGS)0x3;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.buffer.Flags = DML_TENSOR_FLAG_OWNED_BY_DML; /* no initialisation-time binding here */
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out_u8.buffer.Flags = (DML_TENSOR_FLAGS)0x80000000u;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);

    /* dimension counts (strict): 0, 9, and not 4 at 2_1 */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 0, SIZES_2x3);
    f.in.buffer.Sizes = SIZES_2x3; /* a non-NULL pointer, whatever the count */
    f.out.buffer.Sizes = SIZES_2x3;
    f.out_u8.buffer.Sizes = SIZES_2x3;
    f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = 64;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    {
        uint32_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 9, nine);
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 8, nine + 1);
        CHECK_OK(create(g_dev, &f.sign_op));
        CHECK_OK(create(g_dev, &f.inf_op));
    }
    d2_1 = test_device(DML_FEATURE_LEVEL_2_1, 0, EWISE_NAN_ZERO);
    {
        uint32_t five[5] = {1, 1, 2, 3, 4};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 4, SIZES_4D);
        CHECK_OK(create(d2_1, &f.sign_op));
        CHECK_OK(create(d2_1, &f.inf_op));
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 3, SIZES_4D + 1);
        EXPECT(create(d2_1, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(create(d2_1, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 5, five);
        EXPECT(create(d2_1, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 1, SIZES_4D + 3);
        EXPECT(create(d2_1, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    }
    /* input and output dimension counts that differ */
    {
        uint32_t six = 6;
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        test_tensor_init(&f.out, DML_TENSOR_DATA_TYPE_FLOAT32, 1, &six, NULL);
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        test_tensor_init(&f.out_u8, DML_TENSOR_DATA_TYPE_UINT8, 1, &six, NULL);
        EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    }

    /* sizes: 0, too many elements, overflowing products and spans */
    {
        uint32_t zero[2] = {2, 0};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, zero);
        f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = 64;
        f.out_u8.buffer.TotalTensorSizeInBytes = 64;
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    }
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 4, big);
    f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = UINT64_MAX;
    f.out_u8.buffer.TotalTensorSizeInBytes = UINT64_MAX;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    {
        /* 2^32 elements: one too many under strict rules; 2^32 - 1 is allowed */
        uint32_t over[2] = {65536, 65536};
        uint32_t most[2] = {65535, 65537};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_UINT8, 2, over);
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_UINT8, 2, most);
        if (test_is_gpu()) {
            /* valid, but 4 GiB: more than any buffer of lavapipe (and of most GPUs) holds,
             * so refused at once, as ewise_create_buffer refuses such a buffer */
            CHECK_STATUS(create(g_dev, &f.sign_op), EWISE_ERROR_OUT_OF_MEMORY);
            CHECK_MESSAGE_HAS("largest buffer");
        } else {
            CHECK_OK(create(g_dev, &f.sign_op));
        }
    }
    /* with Extensions (no element limit): a byte span past 2^64 */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT64, 8, huge);
    f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = UINT64_MAX;
    f.out_u8.buffer.TotalTensorSizeInBytes = UINT64_MAX;
    EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(create(g_ext, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    {
        size_t i;
        for (i = 0; i < 8; i++) {
            strides[i] = 0xFFFFFFFFu;
        }
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT64, 8, huge);
        f.in.buffer.Strides = strides;
        f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = UINT64_MAX;
        EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    }

    /* TotalTensorSizeInBytes below DMLCalcBufferTensorSize */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.buffer.TotalTensorSizeInBytes = 23;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out.buffer.TotalTensorSizeInBytes = 0;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.out_u8.buffer.TotalTensorSizeInBytes = 6; /* 6 bytes, rounded up to 8 */
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.out_u8.buffer.TotalTensorSizeInBytes = 8;
    CHECK_OK(create(g_dev, &f.inf_op));
    {
        uint32_t three = 3;
        fixture_init(&f, DML_TENSOR_DATA_TYPE_UINT8, 1, &three);
        f.in.buffer.TotalTensorSizeInBytes = 3; /* 3 bytes of data, but the minimum is 4 */
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    }
    {
        uint32_t padded[2] = {8, 1};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        f.in.buffer.Strides = padded;
        f.in.buffer.TotalTensorSizeInBytes = 40; /* (1*8 + 2*1 + 1) * 4 = 44 */
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        f.in.buffer.TotalTensorSizeInBytes = 44;
        CHECK_OK(create(g_dev, &f.sign_op));
    }

    /* output strides: 0 (broadcast) and overlapping elements; the input may broadcast */
    {
        uint32_t zero_stride[2] = {0, 1};
        uint32_t overlapping[2] = {1, 1};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        f.in.buffer.Strides = zero_stride;
        CHECK_OK(create(g_dev, &f.sign_op));
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        f.out.buffer.Strides = zero_stride;
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        f.out.buffer.Strides = overlapping;
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        f.out_u8.buffer.Strides = zero_stride;
        EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    }

    /* GuaranteedBaseOffsetAlignment: a power of two, at least the element size */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.in.buffer.GuaranteedBaseOffsetAlignment = 3;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.buffer.GuaranteedBaseOffsetAlignment = 2;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.buffer.GuaranteedBaseOffsetAlignment = 48;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.in.buffer.GuaranteedBaseOffsetAlignment = 4;
    CHECK_OK(create(g_dev, &f.sign_op));
    f.in.buffer.GuaranteedBaseOffsetAlignment = 256;
    CHECK_OK(create(g_dev, &f.sign_op));

    /* SIGN: input and output types or sizes that differ */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    test_tensor_init(&f.out, DML_TENSOR_DATA_TYPE_FLOAT16, 2, SIZES_2x3, NULL);
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_INT32, 2, SIZES_2x3);
    test_tensor_init(&f.out, DML_TENSOR_DATA_TYPE_UINT32, 2, SIZES_2x3, NULL);
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
    {
        uint32_t other[2] = {3, 2};
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        test_tensor_init(&f.out, DML_TENSOR_DATA_TYPE_FLOAT32, 2, other, NULL);
        EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_INVALID_ARGUMENT);
        fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
        test_tensor_init(&f.out_u8, DML_TENSOR_DATA_TYPE_UINT8, 2, other, NULL);
        EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    }

    /* IS_INFINITY modes */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.inf.InfinityMode = (DML_IS_INFINITY_MODE)7;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.inf.InfinityMode = (DML_IS_INFINITY_MODE)3;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(create(g_ext, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);
    f.inf.InfinityMode = (DML_IS_INFINITY_MODE)0xFFFFFFFFu;
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_INVALID_ARGUMENT);

    /* operators ewise does not implement: NOT_SUPPORTED, naming the number */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    f.sign_op.Type = (DML_OPERATOR_TYPE)1; /* DML_OPERATOR_ELEMENT_WISE_IDENTITY */
    if (CHECK_STATUS(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED)) {
        CHECK_MESSAGE_HAS("1");
    }
    f.sign_op.Type = (DML_OPERATOR_TYPE)99999;
    if (CHECK_STATUS(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED)) {
        CHECK_MESSAGE_HAS("99999");
    }
    f.sign_op.Type = (DML_OPERATOR_TYPE)80; /* ELEMENT_WISE_IS_NAN, SIGN's neighbour */
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
    f.sign_op.Type = DML_OPERATOR_INVALID;
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(ok_call());

    /* data types a level or the strict rules do not accept: NOT_SUPPORTED */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_UINT8, 2, SIZES_2x3);
    if (CHECK_STATUS(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED)) {
        /* docs/SEMANTICS.md section 5: the message names the operator, the tensor and the type */
        CHECK_MESSAGE_HAS("IS_INFINITY");
        CHECK_MESSAGE_HAS("UINT8");
        CHECK_MESSAGE_HAS("Input");
    }
    CHECK_OK(ok_call());
    fixture_init(&f, DML_TENSOR_DATA_TYPE_INT32, 2, SIZES_2x3);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create(g_ext, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED);
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    test_tensor_init(&f.out_u8, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3, NULL);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED); /* output FLOAT32 */
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    test_tensor_init(&f.out_u8, EWISE_TENSOR_DATA_TYPE_BOOL, 2, SIZES_2x3, NULL);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED); /* BOOL output, strict */
    CHECK_OK(create(g_ext, &f.inf_op));
    {
        static const uint32_t never[] = {DML_TENSOR_DATA_TYPE_UINT4, DML_TENSOR_DATA_TYPE_INT4};
        size_t i;
        for (i = 0; i < 2; i++) {
            fixture_init(&f, (DML_TENSOR_DATA_TYPE)never[i], 2, SIZES_2x3);
            f.in.buffer.TotalTensorSizeInBytes = f.out.buffer.TotalTensorSizeInBytes = 64;
            EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
            EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
            EXPECT(create(g_ext, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED);
        }
    }
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT64, 2, SIZES_2x3);
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(create(g_ext, &f.sign_op));
    CHECK_OK(create(g_ext, &f.inf_op));
    fixture_init(&f, EWISE_TENSOR_DATA_TYPE_BFLOAT16, 2, SIZES_2x3);
    EXPECT(create(g_dev, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create(g_dev, &f.inf_op), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(create(g_ext, &f.sign_op));
    CHECK_OK(create(g_ext, &f.inf_op));
    fixture_init(&f, EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 2, SIZES_2x3);
    EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED); /* SIGN has no float8 */
    CHECK_OK(create(g_ext, &f.inf_op));
    fixture_init(&f, EWISE_TENSOR_DATA_TYPE_BOOL, 2, SIZES_2x3);
    EXPECT(create(g_ext, &f.sign_op), EWISE_ERROR_NOT_SUPPORTED);

    /* levels: operators before their introduction, types before their level */
    d1_0 = test_device(DML_FEATURE_LEVEL_1_0, 0, EWISE_NAN_ZERO);
    d2_0 = test_device(DML_FEATURE_LEVEL_2_0, 0, EWISE_NAN_ZERO);
    d4_0 = test_device(DML_FEATURE_LEVEL_4_0, 0, EWISE_NAN_ZERO);
    d4_1 = test_device(DML_FEATURE_LEVEL_4_1, 0, EWISE_NAN_ZERO);
    EXPECT(create_sign_4d(d1_0, DML_TENSOR_DATA_TYPE_FLOAT32), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create_inf_4d(d1_0, DML_TENSOR_DATA_TYPE_FLOAT32), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(create_sign_4d(d2_0, DML_TENSOR_DATA_TYPE_FLOAT32));
    CHECK_OK(create_sign_4d(d2_0, DML_TENSOR_DATA_TYPE_FLOAT16));
    EXPECT(create_inf_4d(d2_0, DML_TENSOR_DATA_TYPE_FLOAT32), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create_sign_4d(d2_0, DML_TENSOR_DATA_TYPE_INT8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create_sign_4d(d2_0, DML_TENSOR_DATA_TYPE_UINT32), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(create_sign_4d(d2_1, DML_TENSOR_DATA_TYPE_INT8));
    CHECK_OK(create_sign_4d(d2_1, DML_TENSOR_DATA_TYPE_UINT32));
    CHECK_OK(create_inf_4d(d2_1, DML_TENSOR_DATA_TYPE_FLOAT16));
    EXPECT(create_sign_4d(d2_1, DML_TENSOR_DATA_TYPE_INT64), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create_sign_4d(d4_0, DML_TENSOR_DATA_TYPE_INT64), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(create_sign_4d(d4_0, DML_TENSOR_DATA_TYPE_UINT64), EWISE_ERROR_NOT_SUPPORTED);
    CHECK_OK(create_sign_4d(d4_1, DML_TENSOR_DATA_TYPE_INT64));
    CHECK_OK(create_sign_4d(d4_1, DML_TENSOR_DATA_TYPE_UINT64));
    EXPECT(create_sign_4d(d4_1, DML_TENSOR_DATA_TYPE_FLOAT64), EWISE_ERROR_NOT_SUPPORTED);
    ewise_release_device(d1_0);
    ewise_release_device(d2_0);
    ewise_release_device(d2_1);
    ewise_release_device(d4_0);
    ewise_release_device(d4_1);
}

/* ------------------------------------------------------------------------------------ */

/*
 * Extensions = 1 (ewise.h): 0 to 64 dimensions (0: a scalar, Sizes may be NULL) and
 * zero-sized dimensions; 65 dimensions is still an error.
 */
static void test_extension_edges(void)
{
    uint32_t ones[65];
    uint32_t empty_sizes[2] = {0, 3};
    DML_BUFFER_TENSOR_DESC buffer;
    DML_TENSOR_DESC tensor;
    DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign;
    DML_OPERATOR_DESC desc;
    ewise_operator *op = NULL;
    ewise_compiled_operator *compiled = NULL;
    ewise_buffer *in = NULL, *out = NULL;
    size_t i;

    for (i = 0; i < 65; i++) {
        ones[i] = 1;
    }
    memset(&buffer, 0, sizeof buffer);
    buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
    buffer.Flags = DML_TENSOR_FLAG_NONE;
    buffer.TotalTensorSizeInBytes = 4;
    tensor.Type = DML_TENSOR_TYPE_BUFFER;
    tensor.Desc = &buffer;
    sign.InputTensor = &tensor;
    sign.OutputTensor = &tensor;
    desc.Type = DML_OPERATOR_ELEMENT_WISE_SIGN;
    desc.Desc = &sign;

    buffer.DimensionCount = 64;
    buffer.Sizes = ones;
    CHECK_OK(create(g_ext, &desc));
    EXPECT(create(g_dev, &desc), EWISE_ERROR_INVALID_ARGUMENT);
    buffer.DimensionCount = 65;
    EXPECT(create(g_ext, &desc), EWISE_ERROR_INVALID_ARGUMENT);

    /* a scalar: 0 dimensions, no Sizes; one element */
    buffer.DimensionCount = 0;
    buffer.Sizes = NULL;
    EXPECT(create(g_dev, &desc), EWISE_ERROR_INVALID_ARGUMENT);
    if (CHECK_OK(ewise_create_operator(g_ext, &desc, &op)) &&
        CHECK_OK(ewise_compile_operator(g_ext, op, DML_EXECUTION_FLAG_NONE, &compiled)) &&
        CHECK_OK(ewise_create_buffer(g_ext, 16, &in)) && CHECK_OK(ewise_create_buffer(g_ext, 16, &out))) {
        float x = -3.0f, y = 5.0f;
        EWISE_BUFFER_BINDING ib = test_binding(in, 0, 4), ob = test_binding(out, 0, 4);
        CHECK_OK(ewise_buffer_write(in, 0, &x, 4));
        if (CHECK_OK(ewise_execute(compiled, &ib, &ob)) && CHECK_OK(ewise_buffer_read(out, 0, &y, 4))) {
            CHECK(y == -1.0f, "0-D SIGN(-3) gave %g", y);
        }
    }
    ewise_release_compiled_operator(compiled);
    ewise_release_operator(op);
    compiled = NULL;
    op = NULL;

    /* an empty tensor: {0, 3}, 0 bytes; executing it writes nothing */
    buffer.DimensionCount = 2;
    buffer.Sizes = empty_sizes;
    buffer.TotalTensorSizeInBytes = 0;
    EXPECT(create(g_dev, &desc), EWISE_ERROR_INVALID_ARGUMENT);
    if (CHECK_OK(ewise_create_operator(g_ext, &desc, &op)) &&
        CHECK_OK(ewise_compile_operator(g_ext, op, DML_EXECUTION_FLAG_NONE, &compiled)) && in != NULL &&
        out != NULL) {
        uint8_t before[16], after[16];
        EWISE_BUFFER_BINDING ib = test_binding(in, 0, 0), ob = test_binding(out, 0, 0);
        CHECK_OK(ewise_buffer_read(out, 0, before, 16));
        CHECK_OK(ewise_execute(compiled, &ib, &ob));
        if (CHECK_OK(ewise_buffer_read(out, 0, after, 16))) {
            CHECK(memcmp(before, after, 16) == 0, "an empty SIGN wrote its output buffer");
        }
    }
    ewise_release_compiled_operator(compiled);
    ewise_release_operator(op);
    ewise_release_buffer(in);
    ewise_release_buffer(out);
}

/* ------------------------------------------------------------------------------------ */

static ewise_compiled_operator *compile_fixture(ewise_device *device, int sign, uint32_t in_alignment)
{
    fixture f;
    ewise_operator *op = NULL;
    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3); /* totals: 24 in, 24 / 8 out */
    f.in.buffer.GuaranteedBaseOffsetAlignment = in_alignment;
    return TEST_COMPILE(device, ewise_create_operator(device, sign ? &f.sign_op : &f.inf_op, &op), &op);
}

static void test_compile_operator(void)
{
    fixture f;
    ewise_operator *op = NULL, *other_op = NULL;
    ewise_compiled_operator *compiled = SENTINEL(ewise_compiled_operator);
    static const uint32_t good_flags[] = {0, 1, 2, 4, 3, 5, 6, 7};
    size_t i;

    fixture_init(&f, DML_TENSOR_DATA_TYPE_FLOAT32, 2, SIZES_2x3);
    if (!CHECK_OK(ewise_create_operator(g_dev, &f.sign_op, &op)) ||
        !CHECK_OK(ewise_create_operator(g_other, &f.sign_op, &other_op))) {
        return;
    }
    EXPECT(ewise_compile_operator(NULL, op, DML_EXECUTION_FLAG_NONE, &compiled), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_dev, NULL, DML_EXECUTION_FLAG_NONE, &compiled), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_dev, op, DML_EXECUTION_FLAG_NONE, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_dev, op, (DML_EXECUTION_FLAGS)0x80, &compiled), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_dev, op, (DML_EXECUTION_FLAGS)0x8, &compiled), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_dev, op, (DML_EXECUTION_FLAGS)0x80000007u, &compiled),
           EWISE_ERROR_INVALID_ARGUMENT);
    /* an operator of another device */
    EXPECT(ewise_compile_operator(g_dev, other_op, DML_EXECUTION_FLAG_NONE, &compiled),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_compile_operator(g_other, op, DML_EXECUTION_FLAG_NONE, &compiled), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK(compiled == SENTINEL(ewise_compiled_operator), "a failed ewise_compile_operator wrote its out-pointer");
    /* every combination of DirectML's three flags is accepted */
    for (i = 0; i < sizeof good_flags / sizeof good_flags[0]; i++) {
        ewise_compiled_operator *c = NULL;
        if (CHECK_OK(ewise_compile_operator(g_dev, op, (DML_EXECUTION_FLAGS)good_flags[i], &c))) {
            CHECK(c != NULL, "flags 0x%x: EWISE_OK and no compiled operator", (unsigned)good_flags[i]);
        }
        ewise_release_compiled_operator(c);
    }
    ewise_release_operator(op);
    ewise_release_operator(other_op);
}

/* ------------------------------------------------------------------------------------ */

static void test_buffers(void)
{
    ewise_buffer *buffer = SENTINEL(ewise_buffer), *b16 = NULL, *b1 = NULL;
    uint8_t host[64], bytes[32];
    size_t i;
    int zero = 1;

    EXPECT(ewise_create_buffer(NULL, 16, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_buffer(g_dev, 16, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_buffer(g_dev, 0, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_create_buffer(g_dev, UINT64_C(1) << 62, &buffer), EWISE_ERROR_OUT_OF_MEMORY);
    EXPECT(ewise_create_buffer(g_dev, UINT64_MAX, &buffer), EWISE_ERROR_OUT_OF_MEMORY);
    CHECK(buffer == SENTINEL(ewise_buffer), "a failed ewise_create_buffer wrote its out-pointer");

    memset(host, 0x5A, sizeof host);
    EXPECT(ewise_wrap_host_memory(NULL, host, sizeof host, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_wrap_host_memory(g_dev, NULL, sizeof host, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_wrap_host_memory(g_dev, host, sizeof host, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    if (test_is_gpu()) {
        /* size 0 on a GPU device: both statuses are right (the contract orders neither) */
        EWISE_STATUS s = ewise_wrap_host_memory(g_dev, host, 0, &buffer);
        CHECK(s == EWISE_ERROR_INVALID_ARGUMENT || s == EWISE_ERROR_NOT_SUPPORTED,
              "GPU ewise_wrap_host_memory of 0 bytes: %s", status_name(s));
        CHECK(ewise_last_error()[0] != '\0', "GPU ewise_wrap_host_memory of 0 bytes: no message");
        CHECK_OK(ok_call());
    } else {
        EXPECT(ewise_wrap_host_memory(g_dev, host, 0, &buffer), EWISE_ERROR_INVALID_ARGUMENT);
    }
    if (test_is_gpu()) {
        EXPECT(ewise_wrap_host_memory(g_dev, host, sizeof host, &buffer), EWISE_ERROR_NOT_SUPPORTED);
    } else {
        ewise_buffer *wrapped = NULL;
        if (CHECK_OK(ewise_wrap_host_memory(g_dev, host, sizeof host, &wrapped))) {
            EXPECT(ewise_buffer_read(wrapped, 60, bytes, 5), EWISE_ERROR_INVALID_ARGUMENT);
            EXPECT(ewise_buffer_write(wrapped, 64, bytes, 1), EWISE_ERROR_INVALID_ARGUMENT);
            if (CHECK_OK(ewise_buffer_read(wrapped, 0, bytes, 32))) {
                CHECK(bytes[0] == 0x5A && bytes[31] == 0x5A, "a wrapped buffer reads the wrapped memory");
            }
        }
        ewise_release_buffer(wrapped);
        CHECK(host[0] == 0x5A && host[63] == 0x5A, "releasing a wrapped buffer changed the memory");
    }
    CHECK(buffer == SENTINEL(ewise_buffer), "a failed ewise_wrap_host_memory wrote its out-pointer");

    if (!CHECK_OK(ewise_create_buffer(g_dev, 16, &b16)) || !CHECK_OK(ewise_create_buffer(g_dev, 1, &b1))) {
        ewise_release_buffer(b16);
        return;
    }
    /* a new buffer is zero, exactly as long as asked */
    memset(bytes, 0xFF, sizeof bytes);
    if (CHECK_OK(ewise_buffer_read(b16, 0, bytes, 16))) {
        for (i = 0; i < 16; i++) {
            zero &= bytes[i] == 0;
        }
        CHECK(zero, "a new buffer is not zero");
    }
    CHECK_OK(ewise_buffer_read(b1, 0, bytes, 1));
    CHECK(bytes[0] == 0, "a new 1-byte buffer is not zero");
    EXPECT(ewise_buffer_read(b1, 0, bytes, 2), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 0, bytes, 17), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 10, bytes, 7), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 17, bytes, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, UINT64_MAX, bytes, 2), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 8, bytes, UINT64_MAX), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 0, bytes, 17), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 15, bytes, 2), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 17, bytes, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, UINT64_MAX, bytes, 2), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 8, bytes, UINT64_MAX - 7), EWISE_ERROR_INVALID_ARGUMENT);
    /* NULL, also for 0 bytes */
    EXPECT(ewise_buffer_read(NULL, 0, bytes, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 0, NULL, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_read(b16, 0, NULL, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(NULL, 0, bytes, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 0, NULL, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_buffer_write(b16, 0, NULL, 0), EWISE_ERROR_INVALID_ARGUMENT);
    /* the edges that are fine */
    CHECK_OK(ewise_buffer_read(b16, 16, bytes, 0));
    CHECK_OK(ewise_buffer_write(b16, 16, bytes, 0));
    CHECK_OK(ewise_buffer_read(b16, 0, bytes, 0));
    for (i = 0; i < 16; i++) {
        bytes[i] = (uint8_t)(i + 1);
    }
    CHECK_OK(ewise_buffer_write(b16, 3, bytes, 13));
    memset(bytes + 16, 0, 16);
    if (CHECK_OK(ewise_buffer_read(b16, 0, bytes + 16, 16))) {
        CHECK(bytes[16] == 0 && bytes[18] == 0 && bytes[19] == 1 && bytes[31] == 13,
              "write at 3 then read: %u %u %u %u", bytes[16], bytes[18], bytes[19], bytes[31]);
    }
    /* a failed write changes nothing */
    memset(bytes, 0xEE, 16);
    EXPECT(ewise_buffer_write(b16, 8, bytes, 9), EWISE_ERROR_INVALID_ARGUMENT);
    if (CHECK_OK(ewise_buffer_read(b16, 8, bytes + 16, 8))) {
        CHECK(bytes[16] != 0xEE && bytes[23] == 13, "a failed ewise_buffer_write wrote");
    }
    ewise_release_buffer(b16);
    ewise_release_buffer(b1);
}

/* ------------------------------------------------------------------------------------ */

/* The output buffer still holds its zeros (no failed execution wrote it). */
static void check_untouched(ewise_buffer *buffer, uint64_t size, const char *what)
{
    uint8_t bytes[256];
    uint64_t i;
    int zero = 1;
    if (CHECK_OK(ewise_buffer_read(buffer, 0, bytes, size))) {
        for (i = 0; i < size; i++) {
            zero &= bytes[i] == 0;
        }
        CHECK(zero, "%s: a failed ewise_execute wrote the output", what);
    }
}

static void test_execute(void)
{
    ewise_compiled_operator *sign = compile_fixture(g_dev, 1, 0);
    ewise_compiled_operator *inf = compile_fixture(g_dev, 0, 0);
    ewise_compiled_operator *aligned32 = compile_fixture(g_dev, 1, 32);
    ewise_compiled_operator *other_sign = compile_fixture(g_other, 1, 0);
    ewise_buffer *in = NULL, *out = NULL, *shared = NULL, *small = NULL, *foreign = NULL;
    EWISE_BUFFER_BINDING ib, ob, bad;
    float values[6] = {-2.0f, -0.0f, 0.0f, 1.0f, 3.5f, -7.0f};

    if (sign == NULL || inf == NULL || aligned32 == NULL || other_sign == NULL ||
        !CHECK_OK(ewise_create_buffer(g_dev, 64, &in)) || !CHECK_OK(ewise_create_buffer(g_dev, 64, &out)) ||
        !CHECK_OK(ewise_create_buffer(g_dev, 128, &shared)) || !CHECK_OK(ewise_create_buffer(g_dev, 32, &small)) ||
        !CHECK_OK(ewise_create_buffer(g_other, 64, &foreign))) {
        goto done;
    }
    CHECK_OK(ewise_buffer_write(in, 0, values, sizeof values));
    CHECK_OK(ewise_buffer_write(shared, 0, values, sizeof values));
    ib = test_binding(in, 0, 24);
    ob = test_binding(out, 0, 24);

    /* NULLs */
    EXPECT(ewise_execute(NULL, &ib, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(sign, NULL, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(sign, &ib, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(NULL, 0, 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    /* offsets not a multiple of 16 (or of GuaranteedBaseOffsetAlignment) */
    bad = test_binding(in, 8, 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(out, 8, 24);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, 4, 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, 16, 24);
    EXPECT(ewise_execute(aligned32, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, 32, 24);
    CHECK_OK(ewise_execute(aligned32, &bad, &ob));
    {
        /* reset the output to zeros for the checks below */
        uint8_t zeros[64];
        memset(zeros, 0, sizeof zeros);
        CHECK_OK(ewise_buffer_write(out, 0, zeros, sizeof zeros));
    }
    /* bound sizes below TotalTensorSizeInBytes */
    bad = test_binding(in, 0, 20);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(out, 0, 23);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(out, 0, 0);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(out, 0, 7); /* IS_INFINITY's output is 8 bytes (6 rounded up) */
    EXPECT(ewise_execute(inf, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    /* ranges past the buffer's end, also overflowing */
    bad = test_binding(small, 16, 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(small, 16, 24);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, 0, 65);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, 64, 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(in, UINT64_C(0xFFFFFFFFFFFFFFF0), 24);
    EXPECT(ewise_execute(sign, &bad, &ob), EWISE_ERROR_INVALID_ARGUMENT);
    bad = test_binding(out, 16, UINT64_MAX);
    EXPECT(ewise_execute(sign, &ib, &bad), EWISE_ERROR_INVALID_ARGUMENT);
    check_untouched(out, 64, "bad bindings");

    /* hazards in one buffer */
    {
        EWISE_BUFFER_BINDING a = test_binding(shared, 0, 24), b = test_binding(shared, 16, 24);
        EWISE_BUFFER_BINDING wide = test_binding(shared, 0, 32), far = test_binding(shared, 32, 24);
        EXPECT(ewise_execute(sign, &a, &b), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(sign, &b, &a), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(sign, &wide, &a), EWISE_ERROR_INVALID_ARGUMENT); /* same start, longer */
        EXPECT(ewise_execute(sign, &a, &wide), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(inf, &a, &a), EWISE_ERROR_INVALID_ARGUMENT);     /* IS_INFINITY in place */
        EXPECT(ewise_execute(inf, &a, &b), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(inf, &wide, &a), EWISE_ERROR_INVALID_ARGUMENT);
        {
            /* nothing was written: the bytes past the input are still zero */
            uint8_t tail[96];
            size_t i;
            int zero = 1;
            if (CHECK_OK(ewise_buffer_read(shared, 32, tail, sizeof tail))) {
                for (i = 0; i < sizeof tail; i++) {
                    zero &= tail[i] == 0;
                }
                CHECK(zero, "a failed ewise_execute wrote into the shared buffer");
            }
        }
        CHECK_OK(ewise_execute(sign, &a, &far));  /* disjoint: fine */
        CHECK_OK(ewise_execute(inf, &a, &far));   /* disjoint: fine */
        CHECK_OK(ewise_execute(sign, &a, &a));    /* SIGN in place: fine */
    }

    /* buffers of another device; an operator compiled on another device */
    {
        EWISE_BUFFER_BINDING fb = test_binding(foreign, 0, 24);
        EXPECT(ewise_execute(sign, &fb, &ob), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(sign, &ib, &fb), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(inf, &fb, &ob), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(other_sign, &ib, &ob), EWISE_ERROR_INVALID_ARGUMENT);
        EXPECT(ewise_execute(other_sign, &fb, &ob), EWISE_ERROR_INVALID_ARGUMENT);
        check_untouched(out, 64, "buffers of another device");
        CHECK_OK(ewise_execute(other_sign, &fb, &fb)); /* its own buffers: fine */
    }

    /* the good call, to finish */
    if (CHECK_OK(ewise_execute(sign, &ib, &ob))) {
        float got[6];
        if (CHECK_OK(ewise_buffer_read(out, 0, got, sizeof got))) {
            CHECK(got[0] == -1.0f && got[2] == 0.0f && got[3] == 1.0f && got[5] == -1.0f,
                  "SIGN {-2,-0,0,1,3.5,-7} gave {%g,%g,%g,%g,%g,%g}", got[0], got[1], got[2], got[3], got[4],
                  got[5]);
        }
    }
done:
    ewise_release_buffer(in);
    ewise_release_buffer(out);
    ewise_release_buffer(shared);
    ewise_release_buffer(small);
    ewise_release_buffer(foreign);
    ewise_release_compiled_operator(sign);
    ewise_release_compiled_operator(inf);
    ewise_release_compiled_operator(aligned32);
    ewise_release_compiled_operator(other_sign);
}

/* The other device kind, when there is one: a GPU device's buffers with a CPU device's
 * operator and the other way round. */
static void test_mixed_kinds(void)
{
    EWISE_DEVICE_DESC gpu_desc = test_device_desc(EWISE_DEVICE_GPU, DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    ewise_device *cpu = NULL, *gpu = NULL;
    ewise_compiled_operator *cpu_sign = NULL, *gpu_sign = NULL;
    ewise_buffer *cpu_buf = NULL, *gpu_buf = NULL;
    EWISE_BUFFER_BINDING cb, gb;
    EWISE_DEVICE_DESC cpu_desc = test_device_desc(EWISE_DEVICE_CPU, DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    if (!test_is_gpu()) {
        return; /* the GPU may not be there: the GPU run checks this */
    }
    if (!CHECK_OK(ewise_create_device(&cpu_desc, &cpu)) || !CHECK_OK(ewise_create_device(&gpu_desc, &gpu))) {
        goto done;
    }
    cpu_sign = compile_fixture(cpu, 1, 0);
    gpu_sign = compile_fixture(gpu, 1, 0);
    if (cpu_sign == NULL || gpu_sign == NULL || !CHECK_OK(ewise_create_buffer(cpu, 32, &cpu_buf)) ||
        !CHECK_OK(ewise_create_buffer(gpu, 32, &gpu_buf))) {
        goto done;
    }
    cb = test_binding(cpu_buf, 0, 24);
    gb = test_binding(gpu_buf, 0, 24);
    EXPECT(ewise_execute(cpu_sign, &gb, &cb), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(cpu_sign, &cb, &gb), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(gpu_sign, &cb, &gb), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(gpu_sign, &gb, &cb), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_execute(gpu_sign, &cb, &cb), EWISE_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ewise_execute(gpu_sign, &gb, &gb));
    CHECK_OK(ewise_execute(cpu_sign, &cb, &cb));
done:
    ewise_release_buffer(cpu_buf);
    ewise_release_buffer(gpu_buf);
    ewise_release_compiled_operator(cpu_sign);
    ewise_release_compiled_operator(gpu_sign);
    ewise_release_device(cpu);
    ewise_release_device(gpu);
}

/* ------------------------------------------------------------------------------------ */

static void test_host_calls(void)
{
    float in[8] = {-1.5f, 2.0f, -0.0f, 0.0f, 4.0f, -5.0f, 6.0f, 7.0f};
    float out[8];
    uint8_t bytes[32];
    uint8_t neither[8];
    size_t i;
    int untouched = 1;
    ewise_device *d1_0 = test_device(DML_FEATURE_LEVEL_1_0, 0, EWISE_NAN_ZERO);
    ewise_device *d2_0 = test_device(DML_FEATURE_LEVEL_2_0, 0, EWISE_NAN_ZERO);
    ewise_device *d2_1 = test_device(DML_FEATURE_LEVEL_2_1, 0, EWISE_NAN_ZERO);
    ewise_device *d4_0 = test_device(DML_FEATURE_LEVEL_4_0, 0, EWISE_NAN_ZERO);

    memset(out, 0, sizeof out);
    memset(bytes, 0xCC, sizeof bytes);
    /* NULLs, also with 0 elements */
    EXPECT(ewise_sign(NULL, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, NULL, out, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, in, NULL, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, NULL, out, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, in, NULL, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(NULL, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 0), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(NULL, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, NULL, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, NULL, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, NULL, bytes, 0),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, NULL, 0),
           EWISE_ERROR_INVALID_ARGUMENT);
    /* 0 elements is fine */
    CHECK_OK(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 0));
    CHECK_OK(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, bytes, 0));
    /* no data types, no modes */
    EXPECT(ewise_sign(g_dev, (DML_TENSOR_DATA_TYPE)999, in, out, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_UNKNOWN, in, out, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, (DML_TENSOR_DATA_TYPE)14, in, out, 8), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, (DML_TENSOR_DATA_TYPE)999, DML_IS_INFINITY_MODE_EITHER, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, (DML_IS_INFINITY_MODE)7, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, (DML_IS_INFINITY_MODE)3, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_ext, DML_TENSOR_DATA_TYPE_FLOAT32, (DML_IS_INFINITY_MODE)3, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    /* the ewise mode NEITHER: an extension, refused by a strict device, all 0 otherwise */
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, EWISE_IS_INFINITY_MODE_NEITHER, in, bytes, 8),
           EWISE_ERROR_INVALID_ARGUMENT);
    memset(neither, 7, sizeof neither);
    if (CHECK_OK(ewise_is_infinity(g_ext, DML_TENSOR_DATA_TYPE_FLOAT32, EWISE_IS_INFINITY_MODE_NEITHER, in,
                                   neither, 8))) {
        for (i = 0; i < 8; i++) {
            CHECK(neither[i] == 0, "NEITHER gave %d at %d", (int)neither[i], (int)i);
        }
    }
    /* types the device does not accept */
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_UINT4, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_INT4, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_ext, DML_TENSOR_DATA_TYPE_INT4, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT64, in, out, 4), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_dev, EWISE_TENSOR_DATA_TYPE_BFLOAT16, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_ext, EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(g_ext, EWISE_TENSOR_DATA_TYPE_BOOL, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_INT32, DML_IS_INFINITY_MODE_EITHER, in, bytes, 8),
           EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_is_infinity(g_ext, DML_TENSOR_DATA_TYPE_UINT8, DML_IS_INFINITY_MODE_EITHER, in, bytes, 8),
           EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT64, DML_IS_INFINITY_MODE_EITHER, in, bytes, 4),
           EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(d1_0, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(d2_0, DML_TENSOR_DATA_TYPE_INT8, in, out, 8), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_sign(d4_0, DML_TENSOR_DATA_TYPE_INT64, in, out, 4), EWISE_ERROR_NOT_SUPPORTED);
    EXPECT(ewise_is_infinity(d2_0, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, bytes, 8),
           EWISE_ERROR_NOT_SUPPORTED);
    for (i = 0; i < 8; i++) {
        untouched &= out[i] == 0.0f;
    }
    for (i = 0; i < sizeof bytes; i++) {
        untouched &= bytes[i] == 0xCC;
    }
    CHECK(untouched, "a failed ewise_sign / ewise_is_infinity wrote its output");
    /* ... and what those levels do accept (1, 4 or 5 elements: not a 4-D shape) */
    if (CHECK_OK(ewise_sign(d2_0, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 5))) {
        CHECK(out[0] == -1.0f && out[1] == 1.0f && out[4] == 1.0f, "level 2_0 ewise_sign");
    }
    CHECK_OK(ewise_sign(d2_1, DML_TENSOR_DATA_TYPE_INT8, in, out, 1));
    CHECK_OK(ewise_is_infinity(d2_1, DML_TENSOR_DATA_TYPE_FLOAT16, DML_IS_INFINITY_MODE_NEGATIVE, in, bytes, 4));
    /* overlapping ranges */
    memcpy(out, in, sizeof in);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, out, out + 1, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, out + 1, out, 4), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, (const uint8_t *)out + 1, out, 4),
           EWISE_ERROR_INVALID_ARGUMENT);
    CHECK(memcmp(out, in, sizeof in) == 0, "a failed ewise_sign changed its memory");
    CHECK_OK(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, out, out + 4, 4)); /* adjacent: fine */
    memcpy(bytes, in, sizeof in);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, bytes, bytes, 4),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, bytes, bytes + 15, 4),
           EWISE_ERROR_INVALID_ARGUMENT);
    /* input [2, 18), output [0, 4) */
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, bytes + 2, bytes, 4),
           EWISE_ERROR_INVALID_ARGUMENT);
    CHECK(memcmp(bytes, in, sizeof in) == 0, "a failed ewise_is_infinity changed its memory");
    CHECK_OK(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, bytes, bytes + 16, 4));
    CHECK_OK(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, bytes + 4, bytes, 4));
    /* counts whose byte length overflows (and could not be memory anyway) */
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, UINT64_MAX), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_ext, DML_TENSOR_DATA_TYPE_FLOAT64, in, out, (UINT64_MAX >> 3) + 1),
           EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_sign(g_dev, DML_TENSOR_DATA_TYPE_INT16, in, out, UINT64_C(1) << 63), EWISE_ERROR_INVALID_ARGUMENT);
    EXPECT(ewise_is_infinity(g_dev, DML_TENSOR_DATA_TYPE_FLOAT32, DML_IS_INFINITY_MODE_EITHER, in, bytes,
                             UINT64_MAX / 2),
           EWISE_ERROR_INVALID_ARGUMENT);
    ewise_release_device(d1_0);
    ewise_release_device(d2_0);
    ewise_release_device(d2_1);
    ewise_release_device(d4_0);
}

/* ------------------------------------------------------------------------------------ */

typedef struct thread_result {
    int fresh_not_null;
    int failed_right;   /* its own failure gave NOT_SUPPORTED with "99999" in the message */
    int cleared;        /* then an OK call left "" */
    char message[512];
} thread_result;

static void *other_thread(void *arg)
{
    thread_result *r = (thread_result *)arg;
    DML_OPERATOR_DESC desc;
    ewise_operator *op = NULL;
    const char *m = ewise_last_error();
    EWISE_STATUS status;
    r->fresh_not_null = m != NULL;
    desc.Type = (DML_OPERATOR_TYPE)99999;
    desc.Desc = &desc;
    status = ewise_create_operator(g_dev, &desc, &op);
    m = ewise_last_error();
    if (m != NULL) {
        strncpy(r->message, m, sizeof r->message - 1);
    }
    r->failed_right = status == EWISE_ERROR_NOT_SUPPORTED && m != NULL && strstr(m, "99999") != NULL;
    r->cleared = ok_call() == EWISE_OK && ewise_last_error() != NULL && ewise_last_error()[0] == '\0';
    return NULL;
}

static void test_last_error_per_thread(void)
{
    char mine[4096];
    pthread_t thread;
    thread_result result;
    memset(&result, 0, sizeof result);
    /* this thread fails one way ... */
    CHECK_STATUS(ewise_create_buffer(g_dev, 0, NULL), EWISE_ERROR_INVALID_ARGUMENT);
    strcpy(mine, check_message());
    /* ... another thread fails another way, then succeeds ... */
    if (pthread_create(&thread, NULL, other_thread, &result) != 0) {
        CHECK(0, "pthread_create failed");
        return;
    }
    pthread_join(thread, NULL);
    CHECK(result.fresh_not_null, "ewise_last_error() is NULL on a new thread");
    CHECK(result.failed_right, "the other thread's failure: message \"%s\"", result.message);
    CHECK(result.cleared, "the other thread's EWISE_OK did not leave \"\"");
    /* ... and this thread's message is still its own */
    CHECK(strcmp(ewise_last_error(), mine) == 0,
          "this thread's message changed while another thread failed and succeeded: \"%s\" -> \"%s\"", mine,
          ewise_last_error());
    CHECK(strcmp(mine, result.message) != 0, "both threads' messages are the same: \"%s\"", mine);
    CHECK_OK(ok_call());
}

/* ------------------------------------------------------------------------------------ */

int main(void)
{
    printf("errors: device %s\n", test_kind_name());
    g_dev = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    g_other = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    g_ext = test_device(DML_FEATURE_LEVEL_6_4, 1, EWISE_NAN_ZERO);
    CHECK_OK(ok_call());

    test_version_and_hresults();
    test_message_kept();
    test_create_device();
    test_check_feature_support();
    test_create_operator();
    test_extension_edges();
    test_compile_operator();
    test_buffers();
    test_execute();
    test_mixed_kinds();
    test_host_calls();
    test_last_error_per_thread();

    /* releasing NULL does nothing */
    ewise_release_device(NULL);
    ewise_release_operator(NULL);
    ewise_release_compiled_operator(NULL);
    ewise_release_buffer(NULL);

    ewise_release_device(g_dev);
    ewise_release_device(g_other);
    ewise_release_device(g_ext);
    return check_finish("errors");
}
