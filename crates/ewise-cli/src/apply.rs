//! Running a job over files: out of place through an atomic output, or in place.

use std::path::Path;

use anyhow::Result;
use ewise_cli::npy::{Header, DATA_ALIGNMENT};
use ewise_cpu::DataType;

use crate::cli::DeviceKind;
use crate::gpu_stream::{self, GpuKernels};
use crate::input::NpyInput;
use crate::job::{Job, Kernels, Op};
use crate::output::Output;
use crate::paths::at;
use crate::progress::Progress;
use crate::stream;

/// Applies `job` to `input` and writes the result to `output`, which appears only when
/// complete. The output keeps the input's shape, memory order and byte order.
pub fn to_file(job: &Job, input: &Path, output: &Path, dtype: Option<DataType>) -> Result<()> {
    let mut source = NpyInput::open(input, dtype, false)?;
    let out_type = job.output_type(source.element);
    job.check_array(
        source.element,
        &source.header.shape,
        source.header.fortran_order,
    )
    .map_err(|e| at(input, e))?;
    let mut engine = Engine::new(job, source.element.data_type, out_type.data_type)?;
    let mut out = Output::create(output, input)?;
    let header = Header {
        descr: out_type.descr(),
        fortran_order: source.header.fortran_order,
        shape: source.header.shape.clone(),
    };
    out.write_all(&header.to_bytes())?;
    let total = source.count.saturating_mul(source.element.size() as u64);
    let progress = Progress::new(total, &label(job, input), job.progress);
    let result = match &mut engine {
        Engine::Cpu(kernels) => {
            stream::transform(&mut source, out_type, kernels, &mut out, &progress)
        }
        Engine::Gpu(kernels) => {
            gpu_stream::transform(&mut source, out_type, kernels, &mut out, &progress)
        }
    };
    progress.finish();
    result?;
    out.commit()
}

/// Applies SIGN to `path`'s data in place. The header is never rewritten; each chunk
/// is written back over itself, so a run that is killed leaves every element either
/// old or done, and SIGN being idempotent, running again completes the file.
pub fn in_place(job: &Job, path: &Path, dtype: Option<DataType>) -> Result<()> {
    let target = NpyInput::open(path, dtype, true)?;
    job.check_array(
        target.element,
        &target.header.shape,
        target.header.fortran_order,
    )
    .map_err(|e| at(path, e))?;
    let size = target.element.size() as u64;
    if target.data_offset % size != 0 {
        return Err(at(
            path,
            format!(
                "data starts at byte {}, not a multiple of the {size}-byte element size (numpy aligns it to {DATA_ALIGNMENT}); an interrupted in-place run could tear an element, so write to a new file instead",
                target.data_offset
            ),
        ));
    }
    let data_type = target.element.data_type;
    let mut engine = Engine::new(job, data_type, data_type)?;
    let progress = Progress::new(
        target.count.saturating_mul(size),
        &label(job, path),
        job.progress,
    );
    let result = match &mut engine {
        Engine::Cpu(kernels) => stream::transform_in_place(&target, kernels, &progress),
        Engine::Gpu(kernels) => gpu_stream::transform_in_place(&target, kernels, &progress),
    };
    progress.finish();
    result
}

/// The operators of a run, on the device the job names.
enum Engine {
    Cpu(Kernels),
    Gpu(GpuKernels),
}

impl Engine {
    fn new(job: &Job, input: DataType, output: DataType) -> Result<Engine> {
        Ok(match job.device {
            DeviceKind::Cpu => Engine::Cpu(job.kernels(input, output)?),
            DeviceKind::Gpu => Engine::Gpu(GpuKernels::new(
                job,
                crate::gpu::open(job.level)?,
                input,
                output,
            )),
        })
    }
}

fn label(job: &Job, path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match job.op {
        Op::Sign(_) => format!("sign {name}"),
        Op::IsInfinity(_) => format!("is-infinity {name}"),
    }
}
