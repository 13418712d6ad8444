//! The defaults table of docs/SEMANTICS.md section 8.2, column "C `ewise_create_device`,
//! zeroed `EWISE_DEVICE_DESC`": every row read from the document and checked through the
//! C ABI on a device made from an all-zero `EWISE_DEVICE_DESC`. A row or a cell this test
//! does not know fails it.
//!
//! The software-renderer row runs this test binary again as a child (the test
//! `gpu_device_child`, which does nothing unless `EWISE_C_DEFAULTS_CHILD=1`) and reads the
//! child's stderr: C has no channel for warnings but that one.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::process::Command;
use std::ptr;

use ewise_c::types::*;
use ewise_c::*;

const COLUMN: &str = "C `ewise_create_device`, zeroed `EWISE_DEVICE_DESC`";
const CHILD_ENV: &str = "EWISE_C_DEFAULTS_CHILD";

fn unknown(setting: &str, cell: &str) -> ! {
    panic!("docs/SEMANTICS.md 8.2, {COLUMN:?}, row {setting:?}: cell {cell:?} is not one this test knows")
}

fn last_error() -> String {
    // SAFETY: never NULL; valid until this thread's next status-returning call.
    unsafe { std::ffi::CStr::from_ptr(ewise_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A device made from `desc`.
struct Device(*mut ewise_device);

impl Device {
    fn new(desc: &EWISE_DEVICE_DESC) -> Result<Device, (EWISE_STATUS, String)> {
        let mut device = ptr::null_mut();
        // SAFETY: valid pointers.
        match unsafe { ewise_create_device(desc, &mut device) } {
            EWISE_OK => Ok(Device(device)),
            status => Err((status, last_error())),
        }
    }

    /// From an all-zero description, or with `level` as its only non-zero field.
    fn zeroed(level: DML_FEATURE_LEVEL) -> Device {
        // SAFETY: a plain C struct of integers, for which all zeros is a value.
        let mut desc: EWISE_DEVICE_DESC = unsafe { std::mem::zeroed() };
        desc.FeatureLevel = level;
        Device::new(&desc)
            .unwrap_or_else(|(s, m)| panic!("zeroed EWISE_DEVICE_DESC: status {s}: {m}"))
    }

    fn sign(
        &self,
        data_type: DML_TENSOR_DATA_TYPE,
        input: &[u8],
        output: &mut [u8],
    ) -> EWISE_STATUS {
        assert_eq!(input.len(), output.len());
        let count = (input.len() / element_size(data_type)) as u64;
        // SAFETY: `count` elements fit both slices, of one length.
        unsafe {
            ewise_sign(
                self.0,
                data_type,
                input.as_ptr().cast(),
                output.as_mut_ptr().cast(),
                count,
            )
        }
    }

    fn is_infinity(
        &self,
        data_type: DML_TENSOR_DATA_TYPE,
        mode: DML_IS_INFINITY_MODE,
        input: &[u8],
        output: &mut [u8],
    ) -> EWISE_STATUS {
        assert_eq!(input.len(), output.len() * element_size(data_type));
        // SAFETY: `output.len()` elements fit both slices.
        unsafe {
            ewise_is_infinity(
                self.0,
                data_type,
                mode,
                input.as_ptr().cast(),
                output.as_mut_ptr(),
                output.len() as u64,
            )
        }
    }

    /// `DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT` for `data_type`.
    fn supports(&self, data_type: DML_TENSOR_DATA_TYPE) -> bool {
        let query = DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT {
            DataType: data_type,
        };
        let mut data = DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT { IsSupported: -1 };
        // SAFETY: the structs of this feature, with their sizes.
        let status = unsafe {
            ewise_check_feature_support(
                self.0,
                DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT,
                size_of_val(&query) as u32,
                (&raw const query).cast(),
                size_of_val(&data) as u32,
                (&raw mut data).cast(),
            )
        };
        assert_eq!(status, EWISE_OK, "{}", last_error());
        data.IsSupported == 1
    }

    /// The highest of every DirectML level that the device supports.
    fn level(&self) -> DML_FEATURE_LEVEL {
        let levels = [
            DML_FEATURE_LEVEL_1_0,
            DML_FEATURE_LEVEL_2_1,
            DML_FEATURE_LEVEL_5_0,
            DML_FEATURE_LEVEL_6_3,
            DML_FEATURE_LEVEL_6_4,
        ];
        let query = DML_FEATURE_QUERY_FEATURE_LEVELS {
            RequestedFeatureLevelCount: levels.len() as u32,
            RequestedFeatureLevels: levels.as_ptr(),
        };
        let mut data = DML_FEATURE_DATA_FEATURE_LEVELS {
            MaxSupportedFeatureLevel: 0,
        };
        // SAFETY: the structs of this feature, with their sizes; `levels` outlives the call.
        let status = unsafe {
            ewise_check_feature_support(
                self.0,
                DML_FEATURE_FEATURE_LEVELS,
                size_of_val(&query) as u32,
                (&raw const query).cast(),
                size_of_val(&data) as u32,
                (&raw mut data).cast(),
            )
        };
        assert_eq!(status, EWISE_OK, "{}", last_error());
        data.MaxSupportedFeatureLevel
    }

    /// Whether the device is a CPU one: only those wrap host memory.
    fn is_cpu(&self) -> bool {
        let mut memory = [0u8; 16];
        let mut buffer = ptr::null_mut();
        // SAFETY: 16 writable bytes that outlive the buffer, released below.
        let status =
            unsafe { ewise_wrap_host_memory(self.0, memory.as_mut_ptr().cast(), 16, &mut buffer) };
        // SAFETY: NULL or the buffer just made.
        unsafe { ewise_release_buffer(buffer) };
        status == EWISE_OK
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the device this value made, released once.
        unsafe { ewise_release_device(self.0) };
    }
}

fn element_size(data_type: DML_TENSOR_DATA_TYPE) -> usize {
    match data_type {
        DML_TENSOR_DATA_TYPE_FLOAT64 | DML_TENSOR_DATA_TYPE_INT64 | DML_TENSOR_DATA_TYPE_UINT64 => {
            8
        }
        DML_TENSOR_DATA_TYPE_FLOAT32 | DML_TENSOR_DATA_TYPE_INT32 | DML_TENSOR_DATA_TYPE_UINT32 => {
            4
        }
        DML_TENSOR_DATA_TYPE_FLOAT16 | EWISE_TENSOR_DATA_TYPE_BFLOAT16 => 2,
        _ => 1,
    }
}

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// Whether SIGN of `input` (elements of `data_type`) is accepted: `EWISE_OK`, or
/// `EWISE_ERROR_NOT_SUPPORTED` (any other status fails).
fn sign_accepted(device: &Device, data_type: DML_TENSOR_DATA_TYPE, input: &[u8]) -> bool {
    let mut output = vec![0xAAu8; input.len()];
    match device.sign(data_type, input, &mut output) {
        EWISE_OK => true,
        EWISE_ERROR_NOT_SUPPORTED => false,
        other => panic!("SIGN of type {data_type}: status {other}: {}", last_error()),
    }
}

fn check_input(setting: &str, cell: &str, accepted: &[bool]) {
    match cell {
        "accepted" => assert!(accepted.iter().all(|&a| a), "{setting}: {accepted:?}"),
        "refused" => assert!(accepted.iter().all(|&a| !a), "{setting}: {accepted:?}"),
        _ => unknown(setting, cell),
    }
}

/// What the extended rules accept and the strict ones refuse, on `device`: FLOAT64 SIGN,
/// BFLOAT16 SIGN and IS_INFINITY, the mode NEITHER.
fn extended_accepted(device: &Device) -> Vec<bool> {
    let bf16 = [0xC000u16, 0x7F80]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect::<Vec<u8>>();
    let mut two = [0u8; 2];
    let inf_bf16 = device.is_infinity(
        EWISE_TENSOR_DATA_TYPE_BFLOAT16,
        DML_IS_INFINITY_MODE_EITHER,
        &bf16,
        &mut two,
    );
    let neither = device.is_infinity(
        DML_TENSOR_DATA_TYPE_FLOAT32,
        EWISE_IS_INFINITY_MODE_NEITHER,
        &f32_bytes(&[f32::INFINITY, 1.0]),
        &mut two,
    );
    vec![
        sign_accepted(
            device,
            DML_TENSOR_DATA_TYPE_FLOAT64,
            &f64_bytes(&[-2.0, 3.0]),
        ),
        sign_accepted(device, EWISE_TENSOR_DATA_TYPE_BFLOAT16, &bf16),
        inf_bf16 == EWISE_OK,
        neither == EWISE_OK,
    ]
}

fn check_row(setting: &str, cell: &str) {
    let device = Device::zeroed(0);
    match setting {
        "rules" => {
            let accepted = extended_accepted(&device);
            match cell {
                "strict" => {
                    assert_eq!(accepted, [false; 4]);
                    assert_eq!(
                        device.level(),
                        DML_FEATURE_LEVEL_6_4,
                        "FeatureLevel 0 is 6_4"
                    );
                }
                "extended" => assert_eq!(accepted, [true; 4]),
                _ => unknown(setting, cell),
            }
        }
        "rules with a feature level" => {
            if cell != "strict" {
                unknown(setting, cell);
            }
            for level in [DML_FEATURE_LEVEL_6_4, DML_FEATURE_LEVEL_5_0] {
                let device = Device::zeroed(level);
                assert_eq!(device.level(), level);
                assert_eq!(extended_accepted(&device), [false; 4], "level {level:#x}");
            }
        }
        "float64 input" => {
            let accepted = sign_accepted(
                &device,
                DML_TENSOR_DATA_TYPE_FLOAT64,
                &f64_bytes(&[-2.0, 3.0]),
            );
            assert_eq!(accepted, device.supports(DML_TENSOR_DATA_TYPE_FLOAT64));
            check_input(setting, cell, &[accepted]);
        }
        "int64 input" => {
            let input: Vec<u8> = [-(1i64 << 62), 0, 7]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            let mut output = vec![0u8; input.len()];
            let status = device.sign(DML_TENSOR_DATA_TYPE_INT64, &input, &mut output);
            let accepted = match status {
                EWISE_OK => {
                    let want: Vec<u8> =
                        [-1i64, 0, 1].iter().flat_map(|v| v.to_ne_bytes()).collect();
                    assert_eq!(output, want);
                    true
                }
                EWISE_ERROR_NOT_SUPPORTED => false,
                other => panic!("INT64 SIGN: status {other}: {}", last_error()),
            };
            check_input(setting, cell, &[accepted]);
        }
        "bfloat16 input" => {
            let accepted = extended_accepted(&device);
            check_input(setting, cell, &accepted[1..3]);
            assert_eq!(
                accepted[1],
                device.supports(EWISE_TENSOR_DATA_TYPE_BFLOAT16)
            );
        }
        "IS_INFINITY mode `neither`" => {
            let mut out = [0xAAu8; 1];
            let status = device.is_infinity(
                DML_TENSOR_DATA_TYPE_FLOAT32,
                EWISE_IS_INFINITY_MODE_NEITHER,
                &f32_bytes(&[f32::INFINITY]),
                &mut out,
            );
            match cell {
                "refused" => {
                    assert_eq!(status, EWISE_ERROR_INVALID_ARGUMENT, "{}", last_error());
                    assert_eq!(out, [0xAA], "a refused call wrote its output");
                }
                "accepted" => assert_eq!((status, out), (EWISE_OK, [0])),
                _ => unknown(setting, cell),
            }
        }
        "SIGN NaN policy" => {
            let nan = f32::from_bits(0x7FC0_0001);
            let input = f32_bytes(&[nan, -nan, -0.0]);
            let mut output = vec![0xAAu8; input.len()];
            assert_eq!(
                device.sign(DML_TENSOR_DATA_TYPE_FLOAT32, &input, &mut output),
                EWISE_OK
            );
            let want = match cell {
                "zero" => f32_bytes(&[0.0, 0.0, 0.0]),
                "propagate" => f32_bytes(&[nan, -nan, 0.0]),
                _ => unknown(setting, cell),
            };
            assert_eq!(output, want, "bits of SIGN(NaN, -NaN, -0)");
        }
        "IS_INFINITY mode" => {
            let mode = match cell {
                "either" => DML_IS_INFINITY_MODE_EITHER,
                "positive" => DML_IS_INFINITY_MODE_POSITIVE,
                "negative" => DML_IS_INFINITY_MODE_NEGATIVE,
                _ => unknown(setting, cell),
            };
            assert_eq!(
                mode, 0,
                "a zeroed DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC's mode"
            );
            let input = f32_bytes(&[f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0]);
            let mut out = [0xAAu8; 4];
            assert_eq!(
                device.is_infinity(DML_TENSOR_DATA_TYPE_FLOAT32, 0, &input, &mut out),
                EWISE_OK
            );
            assert_eq!(out, [1, 1, 0, 0]);
        }
        "IS_INFINITY output" => {
            let (accepted, refused) = match cell {
                "uint8" => (DML_TENSOR_DATA_TYPE_UINT8, EWISE_TENSOR_DATA_TYPE_BOOL),
                _ => unknown(setting, cell),
            };
            assert!(device.supports(accepted));
            assert!(!device.supports(refused), "BOOL is an extension type");
        }
        "device" => match cell {
            "cpu" => {
                assert_eq!(EWISE_DEVICE_CPU, 0);
                assert!(
                    device.is_cpu(),
                    "a zeroed description's device wraps no host memory"
                );
            }
            _ => unknown(setting, cell),
        },
        "software renderer chosen unasked" => match cell {
            "stderr warning" => check_software_warning(),
            _ => unknown(setting, cell),
        },
        _ => panic!("docs/SEMANTICS.md 8.2 has a row {setting:?} that this test does not know"),
    }
}

#[test]
fn every_row_of_the_c_column() {
    let table: BTreeMap<String, String> =
        ewise_testkit::defaults_column(COLUMN).into_iter().collect();
    assert!(table.len() >= 11, "{table:?}");
    for (setting, cell) in &table {
        check_row(setting, cell);
    }
}

/// In a child (`EWISE_C_DEFAULTS_CHILD=1`): a GPU device from an otherwise zeroed
/// description; prints `created` or `unavailable: <message>` on stdout. Does nothing in a
/// normal run.
#[test]
fn gpu_device_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // SAFETY: a plain C struct of integers.
    let mut desc: EWISE_DEVICE_DESC = unsafe { std::mem::zeroed() };
    desc.Kind = EWISE_DEVICE_GPU;
    match Device::new(&desc) {
        Ok(_) => println!("created"),
        Err((EWISE_ERROR_DEVICE_UNAVAILABLE, message)) => println!("unavailable: {message}"),
        Err((status, message)) => panic!("status {status}: {message}"),
    }
}

/// This binary run as a child creating one GPU device; (stdout, the stderr lines that
/// start with "ewise:").
fn gpu_child(adapter: Option<&str>) -> (String, Vec<String>) {
    let mut command = Command::new(std::env::current_exe().expect("the test binary's path"));
    command
        .args([
            "--exact",
            "gpu_device_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1");
    match adapter {
        Some(name) => command.env("EWISE_GPU_ADAPTER", name),
        None => command.env_remove("EWISE_GPU_ADAPTER"),
    };
    let done = command.output().expect("run the test binary as a child");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&done.stdout).into_owned(),
        String::from_utf8_lossy(&done.stderr).into_owned(),
    );
    assert!(done.status.success(), "child failed:\n{stdout}\n{stderr}");
    let ours = stderr
        .lines()
        .filter(|l| l.starts_with("ewise:"))
        .map(str::to_string)
        .collect();
    (stdout, ours)
}

fn check_software_warning() {
    let (stdout, lines) = gpu_child(None);
    if let Some(line) = stdout.lines().find(|l| l.starts_with("unavailable: ")) {
        assert!(
            std::env::var("EWISE_REQUIRE_GPU").as_deref() != Ok("1"),
            "EWISE_REQUIRE_GPU=1 but no GPU adapter: {line}"
        );
        println!("SKIP software renderer row: no GPU adapter at all ({line})");
        return;
    }
    assert!(stdout.contains("created"), "{stdout}");
    let adapter = ewise::gpu::GpuDevice::builder()
        .allow_software(true)
        .build()
        .map(|d| d.adapter().to_string())
        .unwrap_or_default();
    if lines.is_empty() {
        println!("SKIP software renderer row: a hardware adapter ({adapter}), nothing to warn of");
        return;
    }
    assert_eq!(lines.len(), 1, "one line per device: {lines:?}");
    let line = &lines[0];
    assert!(
        line.starts_with("ewise: warning: the GPU device runs on ")
            && line.contains("software renderer")
            && line.contains("EWISE_GPU_ADAPTER"),
        "{line}"
    );
    let name = adapter.split_whitespace().next().unwrap_or("llvmpipe");
    let (named, lines) = gpu_child(Some(name));
    assert!(
        named.contains("created"),
        "EWISE_GPU_ADAPTER={name}: {named}"
    );
    assert_eq!(
        lines,
        Vec::<String>::new(),
        "EWISE_GPU_ADAPTER={name} silences the warning"
    );
}
