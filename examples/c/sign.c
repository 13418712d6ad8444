/*
 * sign.c: DirectML's ELEMENT_WISE_SIGN through ewise's C ABI, written the way a DirectML
 * program is: a device, a buffer tensor description, the operator description, create,
 * compile, buffers, bindings, execute, read back, release.
 *
 * Build (ewise installed where pkg-config finds it; see docs/C-API.md):
 *     cc -std=c99 sign.c $(pkg-config --cflags --libs ewise) -o sign
 * Run:
 *     ./sign          # on the CPU
 *     ./sign gpu      # on a GPU (or EWISE_C_DEVICE=gpu ./sign)
 *
 * It prints each input, its bits and its sign, checks the bits against DirectML's
 * answers, and exits 0 when all match. Every call's status is checked; on failure it
 * prints the status, its HRESULT and ewise_last_error(). With "gpu" and no GPU adapter it
 * says so and exits 0, unless EWISE_REQUIRE_GPU=1. Without a GPU but with a software
 * renderer (lavapipe, llvmpipe, WARP), "gpu" runs on it and ewise_create_device writes one
 * line "ewise: warning: ..." to stderr; EWISE_GPU_ADAPTER=llvmpipe ./sign gpu chooses it
 * knowingly, without the line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ewise.h"

/* DMLCalcBufferTensorSize: the bytes a packed (Strides NULL) tensor spans, rounded up to
 * a multiple of 4. */
static uint64_t calc_buffer_tensor_size(uint64_t element_size, uint32_t dimension_count,
                                        const uint32_t *sizes)
{
    uint64_t elements = 1;
    uint32_t i;
    for (i = 0; i < dimension_count; i++) {
        elements *= sizes[i];
    }
    return (elements * element_size + 3) & ~(uint64_t)3;
}

static const char *status_name(EWISE_STATUS status)
{
    switch (status) {
    case EWISE_OK: return "EWISE_OK";
    case EWISE_ERROR_INVALID_ARGUMENT: return "EWISE_ERROR_INVALID_ARGUMENT";
    case EWISE_ERROR_NOT_SUPPORTED: return "EWISE_ERROR_NOT_SUPPORTED";
    case EWISE_ERROR_OUT_OF_MEMORY: return "EWISE_ERROR_OUT_OF_MEMORY";
    case EWISE_ERROR_DEVICE_UNAVAILABLE: return "EWISE_ERROR_DEVICE_UNAVAILABLE";
    case EWISE_ERROR_INTERNAL: return "EWISE_ERROR_INTERNAL";
    }
    return "(unknown status)";
}

/* Checks a call's status: on failure prints it with ewise_last_error() and jumps to the
 * cleanup at the end of main (as a DirectML program does with FAILED(hr)). */
#define TRY(call)                                                                          \
    do {                                                                                   \
        EWISE_STATUS status_ = (call);                                                     \
        if (status_ != EWISE_OK) {                                                         \
            fprintf(stderr, "%s failed: %s (HRESULT 0x%08" PRIX32 "): %s\n", #call,        \
                    status_name(status_), (uint32_t)ewise_status_hresult(status_),         \
                    ewise_last_error());                                                   \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)

static uint32_t bits_of(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float float_of(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

int main(int argc, char **argv)
{
    /* The input, as bit patterns: -2.5, -0, +0, the smallest subnormal, 3, +inf, -inf, and
     * a NaN; and SIGN's answer for each under DirectML's rules (NaN gives +0). */
    static const uint32_t input_bits[8] = {0xC0200000u, 0x80000000u, 0x00000000u, 0x00000001u,
                                           0x40400000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u};
    static const uint32_t expected_bits[8] = {0xBF800000u, 0x00000000u, 0x00000000u,
                                              0x3F800000u, 0x3F800000u, 0x3F800000u,
                                              0xBF800000u, 0x00000000u};
    const char *kind_name = argc > 1 ? argv[1] : getenv("EWISE_C_DEVICE");
    EWISE_DEVICE_KIND kind = EWISE_DEVICE_CPU;
    ewise_device *device = NULL;
    ewise_operator *op = NULL;
    ewise_compiled_operator *compiled = NULL;
    ewise_buffer *input_buffer = NULL;
    ewise_buffer *output_buffer = NULL;
    float input[8];
    float output[8];
    int exit_code = 1;
    int i;

    if (kind_name != NULL && strcmp(kind_name, "gpu") == 0) {
        kind = EWISE_DEVICE_GPU;
    } else if (kind_name != NULL && kind_name[0] != '\0' && strcmp(kind_name, "cpu") != 0) {
        fprintf(stderr, "usage: %s [cpu|gpu]\n", argv[0]);
        return 2;
    }
    for (i = 0; i < 8; i++) {
        input[i] = float_of(input_bits[i]);
    }
    printf("ewise %s (header %s)\n", ewise_version(), EWISE_VERSION_STRING);

    {
        /* DMLCreateDevice1(d3d12Device, DML_CREATE_DEVICE_FLAG_NONE, DML_FEATURE_LEVEL_6_4, ...) */
        EWISE_DEVICE_DESC device_desc;
        EWISE_STATUS status;
        device_desc.Kind = kind;
        device_desc.FeatureLevel = DML_FEATURE_LEVEL_6_4;
        device_desc.Extensions = 0; /* strict DirectML rules */
        device_desc.NanPolicy = EWISE_NAN_ZERO;
        status = ewise_create_device(&device_desc, &device);
        if (status == EWISE_ERROR_DEVICE_UNAVAILABLE && kind == EWISE_DEVICE_GPU) {
            const char *require = getenv("EWISE_REQUIRE_GPU");
            if (require == NULL || strcmp(require, "1") != 0) {
                printf("SKIP: no GPU: %s\n", ewise_last_error());
                return 0;
            }
        }
        TRY(status);
    }

    {
        /* IDMLDevice::CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS, ...) */
        const DML_FEATURE_LEVEL levels[] = {DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_3_0,
                                            DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_6_4};
        DML_FEATURE_QUERY_FEATURE_LEVELS query;
        DML_FEATURE_DATA_FEATURE_LEVELS support;
        DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT type_query;
        DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT type_support;
        query.RequestedFeatureLevelCount = (uint32_t)(sizeof levels / sizeof levels[0]);
        query.RequestedFeatureLevels = levels;
        TRY(ewise_check_feature_support(device, DML_FEATURE_FEATURE_LEVELS, sizeof query, &query,
                                        sizeof support, &support));
        type_query.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
        TRY(ewise_check_feature_support(device, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT,
                                        sizeof type_query, &type_query, sizeof type_support,
                                        &type_support));
        printf("%s device, feature level 0x%X, FLOAT32 supported: %s\n",
               kind == EWISE_DEVICE_GPU ? "GPU" : "CPU", (unsigned)support.MaxSupportedFeatureLevel,
               type_support.IsSupported ? "yes" : "no");
    }

    {
        /* The tensor: FLOAT32, sizes {1, 1, 2, 4}, packed, for the input and the output. */
        static const uint32_t sizes[4] = {1, 1, 2, 4};
        DML_BUFFER_TENSOR_DESC buffer_desc;
        DML_TENSOR_DESC tensor_desc;
        DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign_desc;
        DML_OPERATOR_DESC op_desc;
        EWISE_BUFFER_BINDING input_binding;
        EWISE_BUFFER_BINDING output_binding;

        buffer_desc.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
        buffer_desc.Flags = DML_TENSOR_FLAG_NONE;
        buffer_desc.DimensionCount = 4;
        buffer_desc.Sizes = sizes;
        buffer_desc.Strides = NULL;
        buffer_desc.TotalTensorSizeInBytes = calc_buffer_tensor_size(sizeof(float), 4, sizes);
        buffer_desc.GuaranteedBaseOffsetAlignment = 0;
        tensor_desc.Type = DML_TENSOR_TYPE_BUFFER;
        tensor_desc.Desc = &buffer_desc;
        sign_desc.InputTensor = &tensor_desc;
        sign_desc.OutputTensor = &tensor_desc;
        op_desc.Type = DML_OPERATOR_ELEMENT_WISE_SIGN;
        op_desc.Desc = &sign_desc;

        /* IDMLDevice::CreateOperator, IDMLDevice::CompileOperator */
        TRY(ewise_create_operator(device, &op_desc, &op));
        TRY(ewise_compile_operator(device, op, DML_EXECUTION_FLAG_NONE, &compiled));

        /* The resources: an upload into the input buffer. */
        TRY(ewise_create_buffer(device, buffer_desc.TotalTensorSizeInBytes, &input_buffer));
        TRY(ewise_create_buffer(device, buffer_desc.TotalTensorSizeInBytes, &output_buffer));
        TRY(ewise_buffer_write(input_buffer, 0, input, sizeof input));

        /* IDMLBindingTable::BindInputs / BindOutputs with DML_BUFFER_BINDINGs, then
         * RecordDispatch, ExecuteCommandLists and the fence wait: one synchronous call. */
        input_binding.Buffer = input_buffer;
        input_binding.Offset = 0;
        input_binding.SizeInBytes = buffer_desc.TotalTensorSizeInBytes;
        output_binding.Buffer = output_buffer;
        output_binding.Offset = 0;
        output_binding.SizeInBytes = buffer_desc.TotalTensorSizeInBytes;
        TRY(ewise_execute(compiled, &input_binding, &output_binding));

        /* The readback. */
        TRY(ewise_buffer_read(output_buffer, 0, output, sizeof output));
    }

    exit_code = 0;
    for (i = 0; i < 8; i++) {
        uint32_t got = bits_of(output[i]);
        int ok = got == expected_bits[i];
        printf("sign(%-13g 0x%08" PRIX32 ") = %-3g 0x%08" PRIX32 "%s\n", (double)input[i],
               input_bits[i], (double)output[i], got, ok ? "" : "  WRONG");
        if (!ok) {
            fprintf(stderr, "element %d: expected 0x%08" PRIX32 "\n", i, expected_bits[i]);
            exit_code = 1;
        }
    }
    printf("%s\n", exit_code == 0 ? "all as DirectML" : "MISMATCH");

done:
    /* IUnknown::Release; each accepts NULL, and the device may go before its children. */
    ewise_release_device(device);
    ewise_release_buffer(output_buffer);
    ewise_release_buffer(input_buffer);
    ewise_release_compiled_operator(compiled);
    ewise_release_operator(op);
    return exit_code;
}
