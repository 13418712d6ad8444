//! `ewise devices`: the GPU adapters `--device gpu` can use.

use std::fmt::Write as _;

use anyhow::Result;
use ewise_gpu::{AdapterList, ADAPTER_ENV, BACKEND_ENV};

use crate::cli::DevicesArgs;
use crate::json;
use crate::table::Table;

/// The adapter list as text or JSON.
pub fn render(args: &DevicesArgs) -> Result<String> {
    let list = ewise_gpu::adapters()?;
    Ok(if args.json { json(&list) } else { table(&list) })
}

fn kind(t: ewise_gpu::wgpu::DeviceType) -> &'static str {
    use ewise_gpu::wgpu::DeviceType;
    match t {
        DeviceType::DiscreteGpu => "discrete",
        DeviceType::IntegratedGpu => "integrated",
        DeviceType::VirtualGpu => "virtual",
        DeviceType::Cpu => "software",
        DeviceType::Other => "other",
    }
}

fn settings(list: &AdapterList) -> String {
    format!(
        "backends searched: {}{}; adapter filter: {}",
        ewise_gpu::backend_names(list.backends),
        if list.from_env {
            format!(" ({BACKEND_ENV})")
        } else {
            String::new()
        },
        list.filter
            .as_deref()
            .map_or("none".to_string(), |f| format!("{f:?} ({ADAPTER_ENV})")),
    )
}

fn table(list: &AdapterList) -> String {
    let mut out = String::new();
    if list.adapters.is_empty() {
        let _ = writeln!(out, "No GPU adapter found ({}).", settings(list));
        let _ = writeln!(out, "{}.", list.hint);
        return out;
    }
    let mut table = Table::new(&["", "try", "adapter", "backend", "type", "driver"]);
    for (i, a) in list.adapters.iter().enumerate() {
        table.row(vec![
            if list.chosen == Some(i) { "*" } else { "" }.to_string(),
            try_number(list, i).map_or("-".to_string(), |n| n.to_string()),
            a.name.clone(),
            format!("{:?}", a.backend),
            kind(a.device_type).to_string(),
            format!("{} {}", a.driver, a.driver_info).trim().to_string(),
        ]);
    }
    out.push_str(&table.render(""));
    let _ = writeln!(out, "\n{}", settings(list));
    match list.chosen {
        Some(i) => {
            let _ = writeln!(
                out,
                "--device gpu tries the adapter marked * first: {}{}",
                list.adapters[i].name,
                if list.order.len() > 1 {
                    "; where it cannot open a device or compile the kernels, the next by \"try\""
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(
                out,
                "--device gpu would fail: no adapter matches the filter (set {ADAPTER_ENV} to part of a name above)"
            );
        }
    }
    out
}

/// Where adapter `i` comes in the order `--device gpu` tries adapters (1 first), if it
/// is tried at all.
fn try_number(list: &AdapterList, i: usize) -> Option<usize> {
    list.order.iter().position(|&k| k == i).map(|p| p + 1)
}

fn json(list: &AdapterList) -> String {
    let adapters: Vec<String> = list
        .adapters
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "{{\"name\": {}, \"backend\": {}, \"type\": \"{}\", \"driver\": {}, \"driver_info\": {}, \"chosen\": {}, \"try\": {}}}",
                json::string(&a.name),
                json::string(&format!("{:?}", a.backend)),
                kind(a.device_type),
                json::string(&a.driver),
                json::string(&a.driver_info),
                list.chosen == Some(i),
                try_number(list, i).map_or("null".to_string(), |n| n.to_string())
            )
        })
        .collect();
    format!("[{}]\n", adapters.join(", "))
}
