// header.cpp: ewise.h from C++17. The handles in std::unique_ptr with the release
// functions, std::vector data, SIGN and IS_INFINITY through DirectML's create / compile /
// bind / execute path and through the one-call API, bit-compared with a scalar reference;
// in place; children outliving their device; several threads on one device and one
// compiled operator, each with its own ewise_last_error(); and the header's C++ parts
// (extension types as constants, DirectML's flag operators).
//
// Device: argv[1] or EWISE_C_DEVICE (cpu or gpu); neither runs both. No GPU adapter:
// "SKIP: no GPU" (exit 0) unless EWISE_REQUIRE_GPU=1. Exit 0 when every check passes.
#include "ewise.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

// ---- the header in C++ ------------------------------------------------------------------

// The extension types are constants of DML_TENSOR_DATA_TYPE (a fixed uint32_t enum here).
constexpr DML_TENSOR_DATA_TYPE kBfloat16 = EWISE_TENSOR_DATA_TYPE_BFLOAT16;
static_assert(static_cast<uint32_t>(kBfloat16) == 1000, "EWISE_TENSOR_DATA_TYPE_BFLOAT16");
static_assert(sizeof(DML_TENSOR_DATA_TYPE) == 4 && sizeof(EWISE_STATUS) == 4, "4-byte enums");
static_assert(std::is_standard_layout<DML_BUFFER_TENSOR_DESC>::value, "a C struct");
static_assert(std::is_same<decltype(&ewise_sign),
                           EWISE_STATUS (*)(ewise_device *, DML_TENSOR_DATA_TYPE, const void *,
                                            void *, uint64_t)>::value,
              "ewise_sign's signature");
// DirectML's DEFINE_ENUM_FLAG_OPERATORS: flags combine into their own type.
constexpr auto kFlags = DML_EXECUTION_FLAG_DISABLE_META_COMMANDS | DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE;
static_assert(std::is_same<std::remove_const<decltype(kFlags)>::type, DML_EXECUTION_FLAGS>::value,
              "DML_EXECUTION_FLAGS | DML_EXECUTION_FLAGS is DML_EXECUTION_FLAGS");

// ---- RAII -------------------------------------------------------------------------------

template <auto Release>
struct Releaser {
    template <class T>
    void operator()(T *p) const noexcept { Release(p); }
};
using Device = std::unique_ptr<ewise_device, Releaser<&ewise_release_device>>;
using Operator = std::unique_ptr<ewise_operator, Releaser<&ewise_release_operator>>;
using Compiled = std::unique_ptr<ewise_compiled_operator, Releaser<&ewise_release_compiled_operator>>;
using Buffer = std::unique_ptr<ewise_buffer, Releaser<&ewise_release_buffer>>;

const char *status_name(EWISE_STATUS s)
{
    switch (s) {
    case EWISE_OK: return "EWISE_OK";
    case EWISE_ERROR_INVALID_ARGUMENT: return "EWISE_ERROR_INVALID_ARGUMENT";
    case EWISE_ERROR_NOT_SUPPORTED: return "EWISE_ERROR_NOT_SUPPORTED";
    case EWISE_ERROR_OUT_OF_MEMORY: return "EWISE_ERROR_OUT_OF_MEMORY";
    case EWISE_ERROR_DEVICE_UNAVAILABLE: return "EWISE_ERROR_DEVICE_UNAVAILABLE";
    case EWISE_ERROR_INTERNAL: return "EWISE_ERROR_INTERNAL";
    }
    return "(not a status)";
}

// A failed call: its text, status and message.
struct CallFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void ok(EWISE_STATUS s, const char *call)
{
    if (s != EWISE_OK) {
        throw CallFailed(std::string(call) + ": " + status_name(s) + ": " + ewise_last_error());
    }
    if (std::strcmp(ewise_last_error(), "") != 0) {
        throw CallFailed(std::string(call) + ": EWISE_OK but ewise_last_error() is \"" +
                         ewise_last_error() + "\"");
    }
}
#define OK(call) ok((call), #call)

int failures = 0;

void expect(bool cond, const std::string &what)
{
    if (!cond) {
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
        ++failures;
    }
}

std::string hex(uint64_t v)
{
    char text[32];
    std::snprintf(text, sizeof text, "0x%" PRIX64, v);
    return text;
}

// ---- descriptions -----------------------------------------------------------------------

// A packed tensor of `count` elements as {1, 1, 1, count}, filled in as DirectML wants
// (TotalTensorSizeInBytes as DMLCalcBufferTensorSize). Holds pointers into itself: not
// copied or moved.
struct Tensor {
    uint32_t sizes[4];
    DML_BUFFER_TENSOR_DESC buffer{};
    DML_TENSOR_DESC desc{};

    Tensor(DML_TENSOR_DATA_TYPE type, uint32_t element_size, uint32_t count)
        : sizes{1, 1, 1, count}
    {
        buffer.DataType = type;
        buffer.Flags = DML_TENSOR_FLAG_NONE;
        buffer.DimensionCount = 4;
        buffer.Sizes = sizes;
        buffer.Strides = nullptr;
        buffer.TotalTensorSizeInBytes = (uint64_t{count} * element_size + 3) / 4 * 4;
        buffer.GuaranteedBaseOffsetAlignment = 0;
        desc.Type = DML_TENSOR_TYPE_BUFFER;
        desc.Desc = &buffer;
    }
    Tensor(const Tensor &) = delete;
    Tensor &operator=(const Tensor &) = delete;
};

Buffer make_buffer(ewise_device *device, uint64_t bytes)
{
    ewise_buffer *b = nullptr;
    OK(ewise_create_buffer(device, bytes, &b));
    return Buffer(b);
}

EWISE_BUFFER_BINDING binding(ewise_buffer *b, uint64_t size)
{
    return EWISE_BUFFER_BINDING{b, 0, size};
}

Compiled compile(ewise_device *device, const DML_OPERATOR_DESC &desc, DML_EXECUTION_FLAGS flags)
{
    ewise_operator *raw_op = nullptr;
    OK(ewise_create_operator(device, &desc, &raw_op));
    Operator op(raw_op); // released at the end of this function: the compiled one lives on
    ewise_compiled_operator *compiled = nullptr;
    OK(ewise_compile_operator(device, op.get(), flags, &compiled));
    return Compiled(compiled);
}

// SIGN of `input` through create / compile / bind / execute; in place when asked.
template <class T>
std::vector<T> sign_op(ewise_device *device, DML_TENSOR_DATA_TYPE type, const std::vector<T> &input,
                       bool in_place)
{
    const Tensor t(type, sizeof(T), static_cast<uint32_t>(input.size()));
    const DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign{&t.desc, &t.desc};
    const DML_OPERATOR_DESC desc{DML_OPERATOR_ELEMENT_WISE_SIGN, &sign};
    Compiled compiled = compile(device, desc, kFlags);
    const uint64_t bytes = t.buffer.TotalTensorSizeInBytes;
    Buffer in = make_buffer(device, bytes);
    OK(ewise_buffer_write(in.get(), 0, input.data(), input.size() * sizeof(T)));
    Buffer out = in_place ? Buffer() : make_buffer(device, bytes);
    ewise_buffer *target = in_place ? in.get() : out.get();
    const EWISE_BUFFER_BINDING ib = binding(in.get(), bytes);
    const EWISE_BUFFER_BINDING ob = binding(target, bytes);
    OK(ewise_execute(compiled.get(), &ib, &ob));
    std::vector<T> result(input.size());
    OK(ewise_buffer_read(target, 0, result.data(), result.size() * sizeof(T)));
    return result;
}

std::vector<uint8_t> is_infinity_op(ewise_device *device, DML_TENSOR_DATA_TYPE type,
                                    DML_IS_INFINITY_MODE mode, const std::vector<uint16_t> &input)
{
    const auto n = static_cast<uint32_t>(input.size());
    const Tensor in_t(type, 2, n);
    const Tensor out_t(DML_TENSOR_DATA_TYPE_UINT8, 1, n);
    const DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC inf{&in_t.desc, &out_t.desc, mode};
    const DML_OPERATOR_DESC desc{DML_OPERATOR_ELEMENT_WISE_IS_INFINITY, &inf};
    Compiled compiled = compile(device, desc, DML_EXECUTION_FLAG_NONE);
    Buffer in = make_buffer(device, in_t.buffer.TotalTensorSizeInBytes);
    Buffer out = make_buffer(device, out_t.buffer.TotalTensorSizeInBytes);
    OK(ewise_buffer_write(in.get(), 0, input.data(), input.size() * 2));
    const EWISE_BUFFER_BINDING ib = binding(in.get(), in_t.buffer.TotalTensorSizeInBytes);
    const EWISE_BUFFER_BINDING ob = binding(out.get(), out_t.buffer.TotalTensorSizeInBytes);
    OK(ewise_execute(compiled.get(), &ib, &ob));
    std::vector<uint8_t> result(input.size());
    OK(ewise_buffer_read(out.get(), 0, result.data(), result.size()));
    return result;
}

// ---- the scalar reference (docs/SEMANTICS.md section 1) ----------------------------------

uint32_t sign_f32(uint32_t x, EWISE_NAN_POLICY policy)
{
    const bool nan = (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu) != 0;
    if (nan) {
        return policy == EWISE_NAN_PROPAGATE ? x : 0u;
    }
    if ((x & 0x7FFFFFFFu) == 0) {
        return 0u;
    }
    return (x & 0x80000000u) ? 0xBF800000u : 0x3F800000u;
}

uint16_t sign_f16(uint16_t x, EWISE_NAN_POLICY policy)
{
    const bool nan = (x & 0x7C00u) == 0x7C00u && (x & 0x03FFu) != 0;
    if (nan) {
        return policy == EWISE_NAN_PROPAGATE ? x : uint16_t{0};
    }
    if ((x & 0x7FFFu) == 0) {
        return 0;
    }
    return (x & 0x8000u) ? uint16_t{0xBC00} : uint16_t{0x3C00};
}

uint8_t is_inf_f16(uint16_t x, DML_IS_INFINITY_MODE mode)
{
    const bool pos = x == 0x7C00u;
    const bool neg = x == 0xFC00u;
    switch (mode) {
    case DML_IS_INFINITY_MODE_EITHER: return pos || neg;
    case DML_IS_INFINITY_MODE_POSITIVE: return pos;
    case DML_IS_INFINITY_MODE_NEGATIVE: return neg;
    }
    return 0;
}

std::vector<uint16_t> every_f16()
{
    std::vector<uint16_t> v(65536);
    for (uint32_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<uint16_t>(i);
    }
    return v;
}

// ---- the tests --------------------------------------------------------------------------

// nullptr when the GPU is asked for and there is none (and EWISE_REQUIRE_GPU is not 1).
Device make_device(EWISE_DEVICE_KIND kind, EWISE_NAN_POLICY policy)
{
    const EWISE_DEVICE_DESC desc{kind, DML_FEATURE_LEVEL_6_4, 0, policy};
    ewise_device *d = nullptr;
    const EWISE_STATUS s = ewise_create_device(&desc, &d);
    if (s == EWISE_ERROR_DEVICE_UNAVAILABLE && kind == EWISE_DEVICE_GPU) {
        const char *require = std::getenv("EWISE_REQUIRE_GPU");
        if (require == nullptr || std::strcmp(require, "1") != 0) {
            return nullptr;
        }
    }
    ok(s, "ewise_create_device");
    return Device(d);
}

void test_f32_sign(ewise_device *device, EWISE_NAN_POLICY policy, const char *name)
{
    const std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u,
                                        0x007FFFFFu, 0x3F800000u, 0xBF800000u, 0x7F7FFFFFu,
                                        0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                        0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu, 0x40490FDBu,
                                        0xC2F6E979u};
    for (bool in_place : {false, true}) {
        const std::vector<uint32_t> got = sign_op(device, DML_TENSOR_DATA_TYPE_FLOAT32, bits, in_place);
        for (size_t i = 0; i < bits.size(); ++i) {
            const uint32_t want = sign_f32(bits[i], policy);
            expect(got[i] == want, std::string(name) + " f32 SIGN" + (in_place ? " in place" : "") +
                                       " of " + hex(bits[i]) + ": got " + hex(got[i]) + ", want " +
                                       hex(want));
        }
    }
}

void test_f16(ewise_device *device, EWISE_NAN_POLICY policy, const char *name)
{
    const std::vector<uint16_t> all = every_f16();
    const std::vector<uint16_t> got = sign_op(device, DML_TENSOR_DATA_TYPE_FLOAT16, all, false);
    int bad = 0;
    for (size_t i = 0; i < all.size(); ++i) {
        if (got[i] != sign_f16(all[i], policy) && bad++ < 5) {
            expect(false, std::string(name) + " f16 SIGN of " + hex(all[i]) + ": got " + hex(got[i]) +
                              ", want " + hex(sign_f16(all[i], policy)));
        }
    }
    expect(bad == 0, std::string(name) + " f16 SIGN: " + std::to_string(bad) + " of 65536 wrong");
    for (DML_IS_INFINITY_MODE mode :
         {DML_IS_INFINITY_MODE_EITHER, DML_IS_INFINITY_MODE_POSITIVE, DML_IS_INFINITY_MODE_NEGATIVE}) {
        const std::vector<uint8_t> inf = is_infinity_op(device, DML_TENSOR_DATA_TYPE_FLOAT16, mode, all);
        int wrong = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            wrong += inf[i] != is_inf_f16(all[i], mode);
        }
        expect(wrong == 0, std::string(name) + " f16 IS_INFINITY mode " +
                               std::to_string(static_cast<int>(mode)) + ": " +
                               std::to_string(wrong) + " of 65536 wrong");
    }
}

void test_int8(ewise_device *device, const char *name)
{
    std::vector<int8_t> all(256);
    for (int i = 0; i < 256; ++i) {
        all[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
    }
    const std::vector<int8_t> got = sign_op(device, DML_TENSOR_DATA_TYPE_INT8, all, false);
    for (size_t i = 0; i < all.size(); ++i) {
        const int8_t want = all[i] < 0 ? -1 : all[i] > 0 ? 1 : 0;
        expect(got[i] == want, std::string(name) + " int8 SIGN of " + std::to_string(all[i]) +
                                   ": got " + std::to_string(got[i]));
    }
}

// The one-call API over std::vector memory, in place too.
void test_one_call(ewise_device *device, EWISE_NAN_POLICY policy, const char *name)
{
    std::vector<uint32_t> data = {0x80000000u, 0x00000001u, 0xFF800000u, 0x7FC00123u, 0x12345678u};
    std::vector<uint32_t> out(data.size());
    OK(ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, data.data(), out.data(), data.size()));
    for (size_t i = 0; i < data.size(); ++i) {
        expect(out[i] == sign_f32(data[i], policy), std::string(name) + " ewise_sign of " + hex(data[i]));
    }
    const std::vector<uint32_t> before = data;
    OK(ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, data.data(), data.data(), data.size()));
    for (size_t i = 0; i < data.size(); ++i) {
        expect(data[i] == sign_f32(before[i], policy), std::string(name) + " in-place ewise_sign of " + hex(before[i]));
    }
    const std::vector<uint16_t> halves = {0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x0000};
    std::vector<uint8_t> flags(halves.size());
    OK(ewise_is_infinity(device, DML_TENSOR_DATA_TYPE_FLOAT16, DML_IS_INFINITY_MODE_NEGATIVE,
                         halves.data(), flags.data(), halves.size()));
    expect(flags == std::vector<uint8_t>({0, 1, 0, 0, 0}), std::string(name) + " ewise_is_infinity NEGATIVE");
    // A strict device refuses the extension type (NOT_SUPPORTED), with a message.
    uint16_t one = 0x3F80;
    const EWISE_STATUS s = ewise_sign(device, kBfloat16, &one, &one, 1);
    expect(s == EWISE_ERROR_NOT_SUPPORTED && ewise_last_error()[0] != '\0',
           std::string(name) + " BFLOAT16 on a strict device: " + status_name(s));
}

// Buffers and compiled operators keep working after their device handle is released.
void test_children_outlive_device(EWISE_DEVICE_KIND kind, const char *name)
{
    Device device = make_device(kind, EWISE_NAN_ZERO);
    const Tensor t(DML_TENSOR_DATA_TYPE_FLOAT32, 4, 4);
    const DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign{&t.desc, &t.desc};
    const DML_OPERATOR_DESC desc{DML_OPERATOR_ELEMENT_WISE_SIGN, &sign};
    Compiled compiled = compile(device.get(), desc, DML_EXECUTION_FLAG_NONE);
    Buffer in = make_buffer(device.get(), 16);
    Buffer out = make_buffer(device.get(), 16);
    device.reset(); // the device goes with its last child
    const std::vector<float> input = {-3.0f, 0.0f, 2.0f, -0.0f};
    OK(ewise_buffer_write(in.get(), 0, input.data(), 16));
    const EWISE_BUFFER_BINDING ib = binding(in.get(), 16);
    const EWISE_BUFFER_BINDING ob = binding(out.get(), 16);
    OK(ewise_execute(compiled.get(), &ib, &ob));
    std::vector<uint32_t> got(4);
    OK(ewise_buffer_read(out.get(), 0, got.data(), 16));
    expect(got == std::vector<uint32_t>({0xBF800000u, 0, 0x3F800000u, 0}),
           std::string(name) + " execute after the device's release");
}

// Zero copy on the CPU: the result lands in the std::vector itself.
void test_wrap(ewise_device *device, EWISE_DEVICE_KIND kind, const char *name)
{
    std::vector<float> memory = {-1.5f, 2.5f, 0.0f, -7.0f};
    ewise_buffer *raw = nullptr;
    const EWISE_STATUS s = ewise_wrap_host_memory(device, memory.data(), 16, &raw);
    Buffer wrapped(raw);
    if (kind == EWISE_DEVICE_GPU) {
        expect(s == EWISE_ERROR_NOT_SUPPORTED && raw == nullptr,
               std::string(name) + " ewise_wrap_host_memory on a GPU: " + status_name(s));
        return;
    }
    ok(s, "ewise_wrap_host_memory");
    const Tensor t(DML_TENSOR_DATA_TYPE_FLOAT32, 4, 4);
    const DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign{&t.desc, &t.desc};
    const DML_OPERATOR_DESC desc{DML_OPERATOR_ELEMENT_WISE_SIGN, &sign};
    Compiled compiled = compile(device, desc, DML_EXECUTION_FLAG_NONE);
    const EWISE_BUFFER_BINDING b = binding(wrapped.get(), 16);
    OK(ewise_execute(compiled.get(), &b, &b));
    expect(memory == std::vector<float>({-1.0f, 1.0f, 0.0f, -1.0f}),
           std::string(name) + " in-place SIGN over wrapped std::vector memory");
}

// Several threads: one device, one compiled operator, each thread its own buffers and its
// own ewise_last_error().
void test_threads(ewise_device *device, const char *name)
{
    const Tensor t(DML_TENSOR_DATA_TYPE_FLOAT32, 4, 64);
    const DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign{&t.desc, &t.desc};
    const DML_OPERATOR_DESC desc{DML_OPERATOR_ELEMENT_WISE_SIGN, &sign};
    Compiled compiled = compile(device, desc, DML_EXECUTION_FLAG_NONE);
    constexpr int kThreads = 4;
    std::vector<int> bad(kThreads, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k) {
        threads.emplace_back([&, k] {
            try {
                for (int round = 0; round < 4; ++round) {
                    std::vector<float> input(64);
                    for (size_t i = 0; i < input.size(); ++i) {
                        input[i] = static_cast<float>(static_cast<int>(i) - 32 + k + round);
                    }
                    Buffer in = make_buffer(device, 256);
                    Buffer out = make_buffer(device, 256);
                    OK(ewise_buffer_write(in.get(), 0, input.data(), 256));
                    const EWISE_BUFFER_BINDING ib = binding(in.get(), 256);
                    const EWISE_BUFFER_BINDING ob = binding(out.get(), 256);
                    OK(ewise_execute(compiled.get(), &ib, &ob));
                    std::vector<float> got(64);
                    OK(ewise_buffer_read(out.get(), 0, got.data(), 256));
                    for (size_t i = 0; i < got.size(); ++i) {
                        const float want = input[i] < 0 ? -1.0f : input[i] > 0 ? 1.0f : 0.0f;
                        bad[static_cast<size_t>(k)] += got[i] != want;
                    }
                    // An error on this thread leaves a message here only.
                    if (k % 2 == 0) {
                        ewise_buffer *none = nullptr;
                        if (ewise_create_buffer(device, 0, &none) != EWISE_ERROR_INVALID_ARGUMENT ||
                            ewise_last_error()[0] == '\0') {
                            bad[static_cast<size_t>(k)] += 1000;
                        }
                    } else if (ewise_last_error()[0] != '\0') {
                        bad[static_cast<size_t>(k)] += 1000;
                    }
                }
            } catch (const std::exception &e) {
                std::fprintf(stderr, "thread %d: %s\n", k, e.what());
                bad[static_cast<size_t>(k)] += 1;
            }
        });
    }
    for (std::thread &th : threads) {
        th.join();
    }
    for (int k = 0; k < kThreads; ++k) {
        expect(bad[static_cast<size_t>(k)] == 0,
               std::string(name) + " thread " + std::to_string(k) + ": " +
                   std::to_string(bad[static_cast<size_t>(k)]) + " wrong");
    }
}

// Every test on one kind of device; false when it is a GPU and there is none.
bool run(EWISE_DEVICE_KIND kind)
{
    const char *name = kind == EWISE_DEVICE_GPU ? "gpu" : "cpu";
    Device zero = make_device(kind, EWISE_NAN_ZERO);
    if (!zero) {
        std::printf("%s: no GPU adapter: %s\n", name, ewise_last_error());
        return false;
    }
    Device propagate = make_device(kind, EWISE_NAN_PROPAGATE);
    test_f32_sign(zero.get(), EWISE_NAN_ZERO, name);
    test_f32_sign(propagate.get(), EWISE_NAN_PROPAGATE, name);
    test_f16(zero.get(), EWISE_NAN_ZERO, name);
    test_f16(propagate.get(), EWISE_NAN_PROPAGATE, name);
    test_int8(zero.get(), name);
    test_one_call(zero.get(), EWISE_NAN_ZERO, name);
    test_one_call(propagate.get(), EWISE_NAN_PROPAGATE, name);
    test_children_outlive_device(kind, name);
    test_wrap(zero.get(), kind, name);
    test_threads(zero.get(), name);
    std::printf("%s: done\n", name);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : std::getenv("EWISE_C_DEVICE");
    std::vector<EWISE_DEVICE_KIND> kinds;
    if (which == nullptr || which[0] == '\0') {
        kinds = {EWISE_DEVICE_CPU, EWISE_DEVICE_GPU};
    } else if (std::strcmp(which, "cpu") == 0) {
        kinds = {EWISE_DEVICE_CPU};
    } else if (std::strcmp(which, "gpu") == 0) {
        kinds = {EWISE_DEVICE_GPU};
    } else {
        std::fprintf(stderr, "usage: %s [cpu|gpu]\n", argv[0]);
        return 2;
    }
    std::printf("ewise %s, header %s\n", ewise_version(), EWISE_VERSION_STRING);
    try {
        bool ran_gpu = false;
        for (EWISE_DEVICE_KIND kind : kinds) {
            const bool ran = run(kind);
            ran_gpu = ran_gpu || (ran && kind == EWISE_DEVICE_GPU);
        }
        if (kinds.size() == 1 && kinds[0] == EWISE_DEVICE_GPU && !ran_gpu) {
            std::printf("SKIP: no GPU: %s\n", ewise_last_error());
            return 0;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "FAIL: %s\n", e.what());
        return 1;
    }
    if (failures != 0) {
        std::fprintf(stderr, "FAIL: %d check(s) failed\n", failures);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
