//! The host's caches, and the choice between plain and streaming (non-temporal) stores
//! that they decide.
//!
//! A plain store reads each output cache line before writing it and leaves the line in
//! the caches; a streaming store skips the read and sends the line to memory. Streaming
//! pays when the bytes an execution touches do not fit in the last-level cache anyway
//! (every line would be evicted before it is used again, so the read is wasted); it
//! loses, by up to half the bandwidth, when they do fit: plain stores then run at the
//! cache's speed, and the next operation finds the output in cache. So the choice
//! depends on the host's last-level cache (on Intel, its L2s: [`Vendor`]), read once per
//! process ([`CacheTopology::host`]):
//!
//! - Linux: `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,shared_cpu_list}`;
//! - Windows: `GetLogicalProcessorInformationEx(RelationCache)`, the caches of logical
//!   processor 0 of group 0 ([`parse_windows_caches`]);
//! - x86-64 elsewhere, or where the system describes no caches: CPUID leaf `0x8000001D`
//!   (AMD and Hygon, with topology extensions) or leaf 4 (Intel and others);
//! - macOS: `sysctlbyname` (`hw.perflevel0.*` on Apple silicon, `hw.l3cachesize`,
//!   `hw.l2cachesize` and `hw.cacheconfig` elsewhere);
//! - otherwise: nothing, and [`FALLBACK_STREAM_THRESHOLD_BYTES`].
//!
//! The rule ([`CacheTopology::stream_threshold`]) and why it is what it is are told
//! there; [`STREAM_THRESHOLD_ENV`] overrides it for experiments ([`stream_override`]).
//!
//! The parsers are pure functions of the files', registers' or records' contents,
//! tested on synthetic values on every platform; junk gives `None`, never a panic. The
//! three system calls (CPUID, `GetLogicalProcessorInformationEx` and `sysctlbyname`) are
//! the only unsafe code here, each in one small function.

use std::fmt;
use std::sync::OnceLock;

/// The environment variable that overrides the streaming threshold: a byte count of
/// input plus output above which executions stream (suffixes `K`/`Ki`/`KiB`, `M`/`Mi`/
/// `MiB`, `G`/`Gi`/`GiB`, all powers of 1024), `0` to stream every execution, or
/// `never` / `off` to stream none. Read once, at the first compilation; an invalid value
/// is ignored (the host's rule stays) and reported by `ewise bench`
/// ([`stream_override`]).
pub const STREAM_THRESHOLD_ENV: &str = "EWISE_STREAM_THRESHOLD";

/// Input plus output bytes above which executions stream when the host's caches are
/// unknown: 16 MiB, the rule ewise had before it read the caches (8 MiB of output, for
/// an operator whose input and output elements are the same size).
pub const FALLBACK_STREAM_THRESHOLD_BYTES: u64 = 16 << 20;

/// The part of the last-level cache that an execution's bytes may fill before it
/// streams, as numerator and denominator: [`CacheTopology::stream_threshold`].
pub const LAST_LEVEL_SHARE: (u64, u64) = (3, 4);

/// One level of the cache hierarchy, as seen from one logical CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cache {
    /// 1 for L1, 2 for L2, and so on.
    pub level: u8,
    /// Its size in bytes (of one instance, the one this CPU uses).
    pub size_bytes: u64,
    /// How many logical CPUs share that instance; 0 when unknown.
    pub shared_by: u32,
}

/// Who made the processor, as far as the streaming rule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// `GenuineIntel`: the L3, where there is one, does not count (see
    /// [`CacheTopology::stream_threshold`]).
    Intel,
    /// Any other vendor, or not known (not x86, or no CPUID).
    Other,
}

impl Vendor {
    /// This processor's vendor, from CPUID leaf 0 on x86-64; [`Vendor::Other`] elsewhere.
    pub fn host() -> Vendor {
        #[cfg(target_arch = "x86_64")]
        {
            let [_, ebx, ecx, edx] = cpuid(0, 0);
            Vendor::from_cpuid_name(ebx, edx, ecx)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Vendor::Other
        }
    }

    /// The vendor whose CPUID leaf 0 name is EBX, EDX, ECX (in that order, 12 bytes).
    pub fn from_cpuid_name(ebx: u32, edx: u32, ecx: u32) -> Vendor {
        let mut name = [0u8; 12];
        name[..4].copy_from_slice(&ebx.to_le_bytes());
        name[4..8].copy_from_slice(&edx.to_le_bytes());
        name[8..].copy_from_slice(&ecx.to_le_bytes());
        if &name == b"GenuineIntel" {
            Vendor::Intel
        } else {
            Vendor::Other
        }
    }
}

/// Where a [`CacheTopology`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheSource {
    /// Linux's `/sys/devices/system/cpu/cpu0/cache`.
    Sysfs,
    /// The x86 CPUID instruction (leaf 4 or `0x8000001D`).
    Cpuid,
    /// macOS's `sysctlbyname`.
    Sysctl,
    /// Windows's `GetLogicalProcessorInformationEx(RelationCache)`.
    Windows,
    /// Nothing could be read.
    None,
}

impl CacheSource {
    /// Lower-case name: `sysfs`, `cpuid`, `sysctl`, `windows` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            CacheSource::Sysfs => "sysfs",
            CacheSource::Cpuid => "cpuid",
            CacheSource::Sysctl => "sysctl",
            CacheSource::Windows => "windows",
            CacheSource::None => "none",
        }
    }
}

/// The caches that decide between plain and streaming stores: the last-level cache
/// (level 2 or more), the L2, how many CPUs this process may use, and where the values
/// came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheTopology {
    /// The highest-level data or unified cache of level 2 or more; `None` when unknown.
    pub last_level: Option<Cache>,
    /// The level-2 data or unified cache; `None` when unknown.
    pub l2: Option<Cache>,
    /// The logical CPUs this process may run on (at least 1).
    pub cpus: usize,
    /// Where the caches were read.
    pub source: CacheSource,
    /// The processor's vendor ([`Vendor::Other`] unless [`CacheTopology::with_vendor`]).
    pub vendor: Vendor,
}

/// When executions use streaming stores: above a number of bytes that compete for the
/// cache (input plus output, counted once in place), or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamThreshold {
    /// Executions whose bytes exceed this many stream (0: every non-empty execution).
    Above(u64),
    /// No execution streams.
    Never,
}

impl StreamThreshold {
    /// Whether an execution whose input and output together span `competing_bytes`
    /// (its output alone when it runs in place) uses streaming stores.
    pub fn streams(self, competing_bytes: u64) -> bool {
        match self {
            StreamThreshold::Above(limit) => competing_bytes > limit,
            StreamThreshold::Never => false,
        }
    }

    /// The byte count above which executions stream; `None` for [`StreamThreshold::Never`].
    pub fn bytes(self) -> Option<u64> {
        match self {
            StreamThreshold::Above(limit) => Some(limit),
            StreamThreshold::Never => None,
        }
    }

    /// Parses [`STREAM_THRESHOLD_ENV`]'s value: a byte count with an optional binary
    /// suffix, or `never` / `off`. `None` for anything else.
    pub fn parse(text: &str) -> Option<StreamThreshold> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("never") || text.eq_ignore_ascii_case("off") {
            return Some(StreamThreshold::Never);
        }
        parse_size(text).map(StreamThreshold::Above)
    }
}

impl fmt::Display for StreamThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamThreshold::Above(limit) => write!(f, "above {}", human_bytes(*limit)),
            StreamThreshold::Never => f.write_str("never"),
        }
    }
}

/// What [`STREAM_THRESHOLD_ENV`] said, read once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StreamOverride {
    /// Not set (or empty): the host's caches decide.
    Unset,
    /// Set to a valid value, which replaces the host's rule.
    Set(StreamThreshold),
    /// Set to this value, which is not valid and is ignored.
    Invalid(String),
}

/// What [`STREAM_THRESHOLD_ENV`] said when first read in this process.
pub fn stream_override() -> &'static StreamOverride {
    static OVERRIDE: OnceLock<StreamOverride> = OnceLock::new();
    OVERRIDE.get_or_init(|| match std::env::var_os(STREAM_THRESHOLD_ENV) {
        None => StreamOverride::Unset,
        Some(value) => match value.to_str() {
            Some(text) if text.trim().is_empty() => StreamOverride::Unset,
            Some(text) => StreamThreshold::parse(text).map_or_else(
                || StreamOverride::Invalid(text.to_owned()),
                StreamOverride::Set,
            ),
            None => StreamOverride::Invalid(value.to_string_lossy().into_owned()),
        },
    })
}

/// When an execution on `threads` threads streams, on this host: the valid override of
/// [`STREAM_THRESHOLD_ENV`] if there is one, else the rule of
/// [`CacheTopology::stream_threshold`] on the host's caches.
pub fn stream_threshold(threads: usize) -> StreamThreshold {
    match stream_override() {
        StreamOverride::Set(threshold) => *threshold,
        _ => StreamThreshold::Above(CacheTopology::host().stream_threshold(threads)),
    }
}

impl CacheTopology {
    /// This host's caches, read once per process (see the [module](self) for where).
    ///
    /// The operating system's description comes first (sysfs on Linux,
    /// `GetLogicalProcessorInformationEx` on Windows), CPUID only where it has none: the
    /// system counts the logical CPUs that really share each cache, where CPUID's
    /// sharing field is the most IDs that could share it (more than there are on parts
    /// with cores disabled; in a virtual machine, whatever the hypervisor passes on), and
    /// the system answers on Arm too. Each reader gives `None` on other systems.
    pub fn host() -> &'static CacheTopology {
        static HOST: OnceLock<CacheTopology> = OnceLock::new();
        HOST.get_or_init(|| {
            let cpus = crate::parallel::available_cores();
            let found = read_sysfs(cpus)
                .or_else(|| read_windows(cpus))
                .or_else(|| read_cpuid(cpus))
                .or_else(|| read_sysctl(cpus));
            found
                .unwrap_or_else(|| CacheTopology::unknown(cpus))
                .with_vendor(Vendor::host())
        })
    }

    /// No cache information, on `cpus` CPUs.
    pub fn unknown(cpus: usize) -> CacheTopology {
        CacheTopology {
            last_level: None,
            l2: None,
            cpus: cpus.max(1),
            source: CacheSource::None,
            vendor: Vendor::Other,
        }
    }

    /// The same caches on a processor of `vendor`.
    pub fn with_vendor(self, vendor: Vendor) -> CacheTopology {
        CacheTopology { vendor, ..self }
    }

    /// Whether the streaming threshold comes from the last-level cache (3/4 of it), or,
    /// on Intel with an L3 and a known L2, from the L2s of the threads alone.
    pub fn counts_last_level(&self) -> bool {
        let l3 = self.last_level.is_some_and(|c| c.level >= 3);
        let l2 = self.l2.is_some_and(|c| c.size_bytes > 0);
        !(self.vendor == Vendor::Intel && l3 && l2)
    }

    /// The topology made of `caches` (data or unified ones; any order, of any levels):
    /// the highest level of 2 or more is the last level, the largest of them where
    /// several are given; empty (size 0) entries are ignored.
    pub fn from_caches(caches: &[Cache], cpus: usize, source: CacheSource) -> CacheTopology {
        let mut last_level: Option<Cache> = None;
        let mut l2: Option<Cache> = None;
        for &c in caches.iter().filter(|c| c.size_bytes > 0 && c.level >= 2) {
            if last_level.is_none_or(|l| (c.level, c.size_bytes) > (l.level, l.size_bytes)) {
                last_level = Some(c);
            }
            if c.level == 2 && l2.is_none_or(|l| c.size_bytes > l.size_bytes) {
                l2 = Some(c);
            }
        }
        CacheTopology {
            last_level,
            l2,
            cpus: cpus.max(1),
            vendor: Vendor::Other,
            source: if last_level.is_some() {
                source
            } else {
                CacheSource::None
            },
        }
    }

    /// The bytes that compete for the cache (input plus output spans; the output alone
    /// in place) above which an execution on `threads` threads uses streaming stores:
    /// 3/4 of the last-level cache, times the number of last-level caches the threads
    /// need when there are more of them than CPUs share one. Without a last-level cache,
    /// [`FALLBACK_STREAM_THRESHOLD_BYTES`].
    ///
    /// Why: while input and output fit in the last-level cache, plain stores keep both
    /// there (the next call, or the next operation, reads them at cache speed), and the
    /// read of each output line that a plain store pays is a cache hit; once they do not
    /// fit, every line is evicted before it is used again, and streaming stores save
    /// that read, a third of the traffic. 3/4 leaves a quarter of the cache to
    /// everything else (code, the caller's data, other cores). On a Zen 1 CCX (8 MiB of
    /// L3, in a 2-CPU VM), SIGN of float32 repeated on the same buffers measured the
    /// crossover there: plain stores 67 GB/s against streaming's 34 at 6 MiB read +
    /// written on 2 threads, even at 7 MiB, streaming ahead from 8 MiB (1 thread: even
    /// at 6 MiB, streaming 35 against 19 GB/s at 7 MiB).
    ///
    /// The same idea as glibc's `memcpy` (sysdeps/x86/dl-cacheinfo.h,
    /// `dl_init_cacheinfo`), which stores non-temporally above a copy size derived from
    /// the shared cache: since glibc 2.38 the larger of 1/4 of the shared cache and
    /// 3/4 of a thread's share of it (on AMD the whole L3 of a CCX, so 3/4 of it; on
    /// Intel the L3 divided among the threads that share it). glibc counts the bytes
    /// copied, one buffer; here the input and the output both count, as both occupy the
    /// cache, which makes this rule stream earlier than glibc's on AMD (there, copies
    /// of up to 3/4 of the L3 move 1.5 times the L3).
    ///
    /// The threads of one execution split its bytes, not the cache: they share the
    /// budget, which does not shrink as they are added. Only when there are more of them
    /// than logical CPUs share one last-level cache do they run on several (at most as
    /// many as this process's CPUs need), whose sizes add up. Other processes' use of
    /// the cache is not known and not counted (in a virtual machine, not even seen).
    ///
    /// On Intel processors with an L3 and a known L2 ([`CacheTopology::counts_last_level`]
    /// false), the threshold is the L2s the threads run on, whole (their count is the
    /// threads divided by the CPUs that share one L2), and the L3 does not count. An
    /// Intel server's L3 is a victim cache spread over the chip's mesh and shared by all
    /// of its cores, and one core moves data from it at about the speed of memory: on an
    /// Emerald Rapids VM (2 CPUs, 2 MiB of L2 each, a 300 MiB L3 shared with CPUs the VM
    /// cannot see), SIGN of float32 on 1 thread ran at 23-27 GB/s with plain stores
    /// against 28-33 streaming at 4 and 8 MiB moved (even at 2 MiB, plain ahead at 1 MiB);
    /// on 2 threads, plain ahead at 4 MiB (60-84 against 26-67), streaming at 8 MiB and
    /// 16 MiB (57-72 against 43-55). With the L3 counted (225 MiB) every size up to 64 Mi
    /// elements stored plainly at 0.77-0.83 of a streaming copy. Intel's client
    /// processors, whose L3 sits on a ring, may keep more in it than that; not measured.
    pub fn stream_threshold(&self, threads: usize) -> u64 {
        let Some(llc) = self.last_level.filter(|c| c.size_bytes > 0) else {
            return FALLBACK_STREAM_THRESHOLD_BYTES;
        };
        let threads = threads.clamp(1, self.cpus.max(1)) as u64;
        if let (false, Some(l2)) = (self.counts_last_level(), self.l2) {
            let l2s = threads.div_ceil(u64::from(l2.shared_by.max(1)));
            return l2.size_bytes.saturating_mul(l2s);
        }
        let domains = threads.div_ceil(u64::from(llc.shared_by.max(1)));
        let budget = llc.size_bytes.saturating_mul(domains);
        let (num, den) = LAST_LEVEL_SHARE;
        budget / den * num + budget % den * num / den
    }
}

impl fmt::Display for CacheTopology {
    /// E.g. `L3 8 MiB shared by 2 CPUs, L2 512 KiB (sysfs)`, or `unknown (none)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = |c: &Cache| {
            let mut s = format!("L{} {}", c.level, human_bytes(c.size_bytes));
            match c.shared_by {
                0 => {}
                1 => s.push_str(" per CPU"),
                n => s.push_str(&format!(" shared by {n} CPUs")),
            }
            s
        };
        match (self.last_level, self.l2) {
            (None, _) => f.write_str("unknown")?,
            (Some(llc), Some(l2)) if llc != l2 => write!(f, "{}, {}", one(&llc), one(&l2))?,
            (Some(llc), _) => f.write_str(&one(&llc))?,
        }
        write!(f, " ({})", self.source.name())
    }
}

/// `bytes` for people: `8 MiB`, `1.5 MiB`, `512 KiB`, `100 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                let value = format!("{:.2}", bytes as f64 / unit as f64);
                format!(
                    "{} {name}",
                    value.trim_end_matches('0').trim_end_matches('.')
                )
            };
        }
    }
    format!("{bytes} bytes")
}

/// A size as sysfs writes them (`8192K`, `32M`, `512`) or as [`STREAM_THRESHOLD_ENV`]
/// takes them (also `Ki`, `KiB`, `Mi`, `MiB`, `Gi`, `GiB`, any case): bytes, all
/// suffixes powers of 1024. `None` for anything else or a value beyond `u64`.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let shift = match suffix.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "ki" | "kib" | "kb" => 10,
        "m" | "mi" | "mib" | "mb" => 20,
        "g" | "gi" | "gib" | "gb" => 30,
        _ => return None,
    };
    number.checked_mul(1u64 << shift)
}

/// The number of CPUs in a sysfs CPU list (`0-1,4-5` is 4); `None` for junk, an empty
/// list or a reversed range.
pub fn parse_cpu_list(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut count: u32 = 0;
    for part in text.split(',') {
        let part = part.trim();
        let n = match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (u32, u32) = (first.parse().ok()?, last.parse().ok()?);
                last.checked_sub(first)?.checked_add(1)?
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
        count = count.checked_add(n)?;
    }
    Some(count)
}

/// One `index*` directory of sysfs's cache description, from its files' contents:
/// `None` for an instruction cache, or when `level` or `size` is junk. A junk or missing
/// `shared_cpu_list` gives [`Cache::shared_by`] 0 (unknown).
pub fn parse_sysfs_cache(
    level: &str,
    kind: &str,
    size: &str,
    shared_cpu_list: Option<&str>,
) -> Option<Cache> {
    let kind = kind.trim();
    if !(kind.eq_ignore_ascii_case("data") || kind.eq_ignore_ascii_case("unified")) {
        return None;
    }
    Some(Cache {
        level: level.trim().parse().ok()?,
        size_bytes: parse_size(size)?,
        shared_by: shared_cpu_list.and_then(parse_cpu_list).unwrap_or(0),
    })
}

/// One subleaf of CPUID leaf 4 (Intel) or `0x8000001D` (AMD), which share a layout:
/// `None` for the terminating null entry, an instruction cache, or junk.
pub fn decode_cpuid_cache(eax: u32, ebx: u32, ecx: u32) -> Option<Cache> {
    let kind = eax & 0x1f;
    // 1: data, 3: unified; 0 ends the list, 2 is an instruction cache.
    if kind != 1 && kind != 3 {
        return None;
    }
    let level = ((eax >> 5) & 0x7) as u8;
    let sharing = ((eax >> 14) & 0xfff) + 1;
    let line = u64::from(ebx & 0xfff) + 1;
    let partitions = u64::from((ebx >> 12) & 0x3ff) + 1;
    let ways = u64::from(ebx >> 22) + 1;
    let sets = u64::from(ecx) + 1;
    let size_bytes = ways
        .checked_mul(partitions)?
        .checked_mul(line)?
        .checked_mul(sets)?;
    (level > 0).then_some(Cache {
        level,
        size_bytes,
        shared_by: sharing,
    })
}

/// `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX`'s header: `Relationship` (i32) and `Size`
/// (u32, the whole record's bytes); the relationship's structure follows at offset 8 on
/// every Windows target (checked against `windows-sys` at compile time on Windows).
const WIN_HEADER: usize = 8;
/// `RelationCache`.
const WIN_RELATION_CACHE: i32 = 2;
/// `PROCESSOR_CACHE_TYPE`'s `CacheUnified` and `CacheData` (1 is `CacheInstruction`, 3
/// `CacheTrace`).
const WIN_CACHE_UNIFIED: i32 = 0;
const WIN_CACHE_DATA: i32 = 2;
/// Offsets in `CACHE_RELATIONSHIP`: `Level` (u8), `CacheSize` (u32), `Type` (i32),
/// `GroupCount` (u16; 0 before Windows 11 and Server 2022, whose SDKs called it
/// `Reserved` and had one `GroupMask`) and the `GroupMasks` array of `GROUP_AFFINITY`.
const WIN_CACHE_LEVEL: usize = 0;
const WIN_CACHE_SIZE: usize = 4;
const WIN_CACHE_TYPE: usize = 8;
const WIN_CACHE_GROUP_COUNT: usize = 30;
const WIN_CACHE_GROUP_MASKS: usize = 32;
/// `GROUP_AFFINITY` after its `Mask` (a `KAFFINITY`, pointer-sized): `Group` (u16) and
/// `Reserved` (3 x u16).
const WIN_AFFINITY_TAIL: usize = 8;

// The offsets above are windows-sys's layout (which is the SDK's).
#[cfg(windows)]
const _: () = {
    use std::mem::{offset_of, size_of};
    use windows_sys::Win32::System::SystemInformation as si;
    assert!(offset_of!(si::SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX, Size) == 4);
    assert!(offset_of!(si::SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX, Anonymous) == WIN_HEADER);
    assert!(offset_of!(si::CACHE_RELATIONSHIP, Level) == WIN_CACHE_LEVEL);
    assert!(offset_of!(si::CACHE_RELATIONSHIP, CacheSize) == WIN_CACHE_SIZE);
    assert!(offset_of!(si::CACHE_RELATIONSHIP, Type) == WIN_CACHE_TYPE);
    assert!(offset_of!(si::CACHE_RELATIONSHIP, GroupCount) == WIN_CACHE_GROUP_COUNT);
    assert!(offset_of!(si::CACHE_RELATIONSHIP, Anonymous) == WIN_CACHE_GROUP_MASKS);
    assert!(offset_of!(si::GROUP_AFFINITY, Group) == size_of::<usize>());
    assert!(size_of::<si::GROUP_AFFINITY>() == size_of::<usize>() + WIN_AFFINITY_TAIL);
    assert!(si::RelationCache == WIN_RELATION_CACHE);
    assert!(si::CacheUnified == WIN_CACHE_UNIFIED && si::CacheData == WIN_CACHE_DATA);
};

/// The data and unified caches of logical processor 0 of group 0 (the CPU whose caches
/// sysfs lists on Linux), from the records that Windows's
/// `GetLogicalProcessorInformationEx(RelationCache, ...)` writes, laid out for this
/// target's pointer width (the width of a `GROUP_AFFINITY` mask).
///
/// The records are walked by their `Size`; records of other relationships are skipped,
/// and so are instruction and trace caches, level 0 and caches that processor 0 does not
/// use (Windows lists every instance of every cache, and on hybrid processors they
/// differ). [`Cache::shared_by`] counts the bits of every group's mask. `None` when the
/// bytes are not a well-formed list: a record (or the bytes after the last one) shorter
/// than a header, a `Size` beyond the buffer, or a cache record too short for its
/// structure and `GroupCount` masks. An empty buffer is no caches.
pub fn parse_windows_caches(records: &[u8]) -> Option<Vec<Cache>> {
    parse_windows_caches_with(records, std::mem::size_of::<usize>())
}

/// [`parse_windows_caches`] with `mask_bytes`-byte affinity masks (4 or 8).
fn parse_windows_caches_with(records: &[u8], mask_bytes: usize) -> Option<Vec<Cache>> {
    if mask_bytes != 4 && mask_bytes != 8 {
        return None;
    }
    let mut caches = Vec::new();
    let mut rest = records;
    while !rest.is_empty() {
        let relationship = i32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
        let size = u32::from_le_bytes(rest.get(4..WIN_HEADER)?.try_into().ok()?);
        let size = usize::try_from(size).ok()?;
        if size < WIN_HEADER {
            return None;
        }
        let (record, next) = rest.split_at_checked(size)?;
        rest = next;
        if relationship == WIN_RELATION_CACHE {
            if let Some(cache) = decode_windows_cache(&record[WIN_HEADER..], mask_bytes)? {
                caches.push(cache);
            }
        }
    }
    Some(caches)
}

/// One `CACHE_RELATIONSHIP` (the record after its header): `Some(None)` for a cache that
/// does not count (not data or unified, level 0, or not processor 0's), `None` when the
/// record is too short for its fields and masks.
fn decode_windows_cache(cache: &[u8], mask_bytes: usize) -> Option<Option<Cache>> {
    let u16_at = |at: usize| {
        let bytes = cache.get(at..at + 2)?;
        Some(u16::from_le_bytes(bytes.try_into().ok()?))
    };
    let u32_at = |at: usize| {
        let bytes = cache.get(at..at + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    };
    let level = *cache.get(WIN_CACHE_LEVEL)?;
    let size_bytes = u64::from(u32_at(WIN_CACHE_SIZE)?);
    let kind = u32_at(WIN_CACHE_TYPE)?.cast_signed();
    let groups = usize::from(u16_at(WIN_CACHE_GROUP_COUNT)?.max(1));
    let stride = mask_bytes + WIN_AFFINITY_TAIL;
    let masks = cache.get(WIN_CACHE_GROUP_MASKS..WIN_CACHE_GROUP_MASKS + groups * stride)?;
    let mut shared_by: u32 = 0;
    let mut on_cpu0 = false;
    for affinity in masks.chunks_exact(stride) {
        let (mask, tail) = affinity.split_at(mask_bytes);
        let mut word = [0u8; 8];
        word[..mask_bytes].copy_from_slice(mask);
        let mask = u64::from_le_bytes(word);
        let group = u16::from_le_bytes([tail[0], tail[1]]);
        shared_by = shared_by.saturating_add(mask.count_ones());
        on_cpu0 |= group == 0 && mask & 1 != 0;
    }
    let counts = (kind == WIN_CACHE_DATA || kind == WIN_CACHE_UNIFIED) && level > 0 && on_cpu0;
    Some(counts.then_some(Cache {
        level,
        size_bytes,
        shared_by,
    }))
}

/// Linux's sysfs description of cpu0's caches; `None` where it has none.
fn read_sysfs(cpus: usize) -> Option<CacheTopology> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut caches = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let is_index = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("index"));
        if !is_index {
            continue;
        }
        let read = |name: &str| std::fs::read_to_string(path.join(name)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let shared = read("shared_cpu_list");
        caches.extend(parse_sysfs_cache(&level, &kind, &size, shared.as_deref()));
    }
    let topology = CacheTopology::from_caches(&caches, cpus, CacheSource::Sysfs);
    topology.last_level.is_some().then_some(topology)
}

/// CPUID's cache description (x86-64 only); `None` where it gives none.
fn read_cpuid(cpus: usize) -> Option<CacheTopology> {
    #[cfg(target_arch = "x86_64")]
    {
        let max_extended = cpuid(0x8000_0000, 0)[0];
        let topology_extensions =
            max_extended >= 0x8000_0001 && cpuid(0x8000_0001, 0)[2] & (1 << 22) != 0;
        let leaf = if topology_extensions && max_extended >= 0x8000_001D {
            0x8000_001D
        } else if cpuid(0, 0)[0] >= 4 {
            4
        } else {
            return None;
        };
        let mut caches = Vec::new();
        for sub in 0..16 {
            let [eax, ebx, ecx, _] = cpuid(leaf, sub);
            if eax & 0x1f == 0 {
                break;
            }
            caches.extend(decode_cpuid_cache(eax, ebx, ecx));
        }
        let topology = CacheTopology::from_caches(&caches, cpus, CacheSource::Cpuid);
        topology.last_level.is_some().then_some(topology)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = cpus;
        None
    }
}

/// Windows's description of processor 0's caches ([`parse_windows_caches`]); `None`
/// elsewhere or where it gives none.
fn read_windows(cpus: usize) -> Option<CacheTopology> {
    #[cfg(windows)]
    {
        let records = windows_cache_records()?;
        let caches = parse_windows_caches(&records)?;
        let topology = CacheTopology::from_caches(&caches, cpus, CacheSource::Windows);
        topology.last_level.is_some().then_some(topology)
    }
    #[cfg(not(windows))]
    {
        let _ = cpus;
        None
    }
}

/// The bytes that `GetLogicalProcessorInformationEx(RelationCache, ...)` writes: a first
/// call with no buffer asks for the size, then calls with a buffer of that size, asked
/// again (at most 4 calls in all) when processors were added in between and it no longer
/// suffices. `None` on any other failure, or beyond 16 MiB.
#[cfg(windows)]
#[allow(unsafe_code)]
fn windows_cache_records() -> Option<Vec<u8>> {
    use windows_sys::Win32::Foundation::ERROR_INSUFFICIENT_BUFFER;
    use windows_sys::Win32::System::SystemInformation::{
        GetLogicalProcessorInformationEx, RelationCache,
    };
    const MAX_BYTES: usize = 16 << 20;
    // u64 words: the records hold pointer-sized masks, so the buffer is aligned for them.
    let mut words: Vec<u64> = Vec::new();
    for _ in 0..4 {
        let capacity = words.len() * 8;
        let mut len = u32::try_from(capacity).ok()?;
        let buffer = if words.is_empty() {
            std::ptr::null_mut()
        } else {
            words.as_mut_ptr().cast()
        };
        // SAFETY: `buffer` is null with `len` 0 (the size query), or points to `len`
        // writable bytes, aligned to 8, that `words` owns for the whole call; the call
        // writes at most `len` bytes there and stores the count (or the size needed) in
        // `len`, which lives for the whole call.
        let ok = unsafe { GetLogicalProcessorInformationEx(RelationCache, buffer, &mut len) };
        let len = usize::try_from(len).ok()?;
        if ok != 0 {
            let bytes: &[u8] = bytemuck::cast_slice(&words);
            return bytes.get(..len).map(<[u8]>::to_vec);
        }
        let error = std::io::Error::last_os_error().raw_os_error();
        if error != Some(ERROR_INSUFFICIENT_BUFFER as i32) || len <= capacity || len > MAX_BYTES {
            return None;
        }
        words = vec![0; len.div_ceil(8)];
    }
    None
}

/// CPUID with `leaf` in EAX and `sub` in ECX: EAX, EBX, ECX, EDX.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, unused_unsafe)]
fn cpuid(leaf: u32, sub: u32) -> [u32; 4] {
    // SAFETY: every x86-64 CPU has CPUID, and it only reads registers; leaves beyond
    // the CPU's maximum return zeros or the highest leaf's values, never fault. (It is
    // an unsafe function before Rust 1.94 and safe after, hence `unused_unsafe`.)
    let r = unsafe { std::arch::x86_64::__cpuid_count(leaf, sub) };
    [r.eax, r.ebx, r.ecx, r.edx]
}

/// macOS's cache description; `None` elsewhere or where it gives none.
fn read_sysctl(cpus: usize) -> Option<CacheTopology> {
    #[cfg(target_os = "macos")]
    {
        let positive = |name: &str| sysctl_u64(name).filter(|&v| v > 0);
        let sharing = sysctl_cacheconfig();
        let shared = |level: usize| {
            sharing
                .get(level)
                .and_then(|&n| u32::try_from(n).ok())
                .unwrap_or(0)
        };
        let mut caches = Vec::new();
        if let Some(size) = positive("hw.perflevel0.l3cachesize") {
            let by = positive("hw.perflevel0.cpusperl3").map_or(shared(3), |n| n as u32);
            caches.push(Cache {
                level: 3,
                size_bytes: size,
                shared_by: by,
            });
        } else if let Some(size) = positive("hw.l3cachesize") {
            caches.push(Cache {
                level: 3,
                size_bytes: size,
                shared_by: shared(3),
            });
        }
        if let Some(size) = positive("hw.perflevel0.l2cachesize") {
            let by = positive("hw.perflevel0.cpusperl2").map_or(shared(2), |n| n as u32);
            caches.push(Cache {
                level: 2,
                size_bytes: size,
                shared_by: by,
            });
        } else if let Some(size) = positive("hw.l2cachesize") {
            caches.push(Cache {
                level: 2,
                size_bytes: size,
                shared_by: shared(2),
            });
        }
        let topology = CacheTopology::from_caches(&caches, cpus, CacheSource::Sysctl);
        topology.last_level.is_some().then_some(topology)
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = cpus;
        None
    }
}

/// A numeric sysctl of 4 or 8 bytes.
#[cfg(target_os = "macos")]
fn sysctl_u64(name: &str) -> Option<u64> {
    let mut bytes = [0u8; 8];
    let len = sysctl_bytes(name, &mut bytes)?;
    match len {
        4 => Some(u64::from(u32::from_ne_bytes(bytes[..4].try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(bytes)),
        _ => None,
    }
}

/// `hw.cacheconfig`: how many CPUs share each level (0: memory, 1: L1, 2: L2, ...).
#[cfg(target_os = "macos")]
fn sysctl_cacheconfig() -> Vec<u64> {
    let mut bytes = [0u8; 8 * 10];
    let len = sysctl_bytes("hw.cacheconfig", &mut bytes).unwrap_or(0);
    bytes[..len.min(bytes.len())]
        .chunks_exact(8)
        .filter_map(|w| w.try_into().ok().map(u64::from_ne_bytes))
        .collect()
}

/// Reads sysctl `name` into `out`; the number of bytes written, `None` on failure.
#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
fn sysctl_bytes(name: &str, out: &mut [u8]) -> Option<usize> {
    let name = std::ffi::CString::new(name).ok()?;
    let mut len: libc::size_t = out.len();
    // SAFETY: `name` is a NUL-terminated string; `out` is writable for `len` bytes and
    // the kernel writes at most `len` bytes there, storing the count in `len`; nothing
    // is set (null new value, length 0).
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            out.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len <= out.len()).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn llc(level: u8, size_bytes: u64, shared_by: u32) -> Cache {
        Cache {
            level,
            size_bytes,
            shared_by,
        }
    }

    fn topology(caches: &[Cache], cpus: usize) -> CacheTopology {
        CacheTopology::from_caches(caches, cpus, CacheSource::Sysfs)
    }

    #[test]
    fn sizes_parse_as_sysfs_and_people_write_them() {
        assert_eq!(parse_size("8192K\n"), Some(8 * MIB));
        assert_eq!(parse_size("32M"), Some(32 * MIB));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("24Mi"), Some(24 * MIB));
        assert_eq!(parse_size("24 MiB"), Some(24 * MIB));
        assert_eq!(parse_size("64kib"), Some(64 << 10));
        assert_eq!(parse_size("0"), Some(0));
        for junk in [
            "",
            "K",
            "-1",
            "1.5M",
            "8T",
            "12Q",
            "0x10",
            "1 2",
            "K8",
            "99999999999999999999",
            "17179869184G",
            "\u{0}",
            "８M",
        ] {
            assert_eq!(parse_size(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn cpu_lists_count_their_cpus() {
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0-1,4-5"), Some(4));
        assert_eq!(parse_cpu_list("0-7,64-71"), Some(16));
        assert_eq!(parse_cpu_list("3,5,7"), Some(3));
        assert_eq!(parse_cpu_list("0-4294967295"), None);
        for junk in ["", ",", "1-", "-1", "5-3", "a", "0-1,,2", "0--1", "0-1-2"] {
            assert_eq!(parse_cpu_list(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn sysfs_entries_parse_data_and_unified_caches_only() {
        assert_eq!(
            parse_sysfs_cache("3\n", "Unified\n", "8192K\n", Some("0-1\n")),
            Some(llc(3, 8 * MIB, 2))
        );
        assert_eq!(
            parse_sysfs_cache("1", "Data", "32K", Some("0")),
            Some(llc(1, 32 << 10, 1))
        );
        assert_eq!(
            parse_sysfs_cache("1", "Instruction", "64K", Some("0")),
            None
        );
        assert_eq!(
            parse_sysfs_cache("2", "Unified", "512K", None),
            Some(llc(2, 512 << 10, 0))
        );
        assert_eq!(
            parse_sysfs_cache("2", "Unified", "512K", Some("junk")),
            Some(llc(2, 512 << 10, 0))
        );
        assert_eq!(parse_sysfs_cache("x", "Unified", "512K", None), None);
        assert_eq!(parse_sysfs_cache("2", "Unified", "lots", None), None);
        assert_eq!(parse_sysfs_cache("", "", "", Some("")), None);
    }

    #[test]
    fn cpuid_subleaves_decode() {
        // This host's (Zen 1, in a VM) 0x8000001D subleaf 3: a unified L3, 2 sharing,
        // 16 ways, 1 partition, 64-byte lines, 8192 sets.
        assert_eq!(
            decode_cpuid_cache(0x4163, 0x03c0_003f, 0x1fff),
            Some(llc(3, 8 * MIB, 2))
        );
        // An L1 data cache: level 1, type 1, 8 ways x 64 sets x 64 bytes.
        let eax = 1 | (1 << 5);
        let ebx = 63 | (7 << 22);
        assert_eq!(decode_cpuid_cache(eax, ebx, 63), Some(llc(1, 32 << 10, 1)));
        assert_eq!(decode_cpuid_cache(0, 0, 0), None);
        assert_eq!(decode_cpuid_cache(2 | (1 << 5), ebx, 63), None);
        assert_eq!(decode_cpuid_cache(3, ebx, 63), None, "level 0");
        // Every field at its maximum: 2^64 bytes, which does not fit.
        assert_eq!(decode_cpuid_cache(!0x1cu32, u32::MAX, u32::MAX), None);
        let big = decode_cpuid_cache(!0x1cu32, u32::MAX, u32::MAX >> 1);
        assert_eq!(big.map(|c| (c.level, c.shared_by)), Some((7, 4096)));
    }

    /// One `RelationCache` record as Windows writes it with `mask_bytes`-byte masks:
    /// `GroupCount` `group_count`, then `masks` as (group, mask), and `pad` bytes more.
    fn win_cache(
        mask_bytes: usize,
        (level, kind, size): (u8, i32, u32),
        group_count: u16,
        masks: &[(u16, u64)],
        pad: usize,
    ) -> Vec<u8> {
        let stride = mask_bytes + 8;
        let mut r = vec![0u8; 8 + 32 + masks.len() * stride + pad];
        let total = r.len() as u32;
        r[..4].copy_from_slice(&2i32.to_le_bytes());
        r[4..8].copy_from_slice(&total.to_le_bytes());
        r[8] = level;
        r[9] = 8; // associativity
        r[10..12].copy_from_slice(&64u16.to_le_bytes()); // line size
        r[12..16].copy_from_slice(&size.to_le_bytes());
        r[16..20].copy_from_slice(&kind.to_le_bytes());
        r[38..40].copy_from_slice(&group_count.to_le_bytes());
        for (k, &(group, mask)) in masks.iter().enumerate() {
            let at = 40 + k * stride;
            r[at..at + mask_bytes].copy_from_slice(&mask.to_le_bytes()[..mask_bytes]);
            r[at + mask_bytes..at + mask_bytes + 2].copy_from_slice(&group.to_le_bytes());
        }
        r
    }

    /// A record of another relationship, `size` bytes long.
    fn win_other(relationship: i32, size: u32) -> Vec<u8> {
        let mut r = vec![0xa5u8; size as usize];
        r[..4].copy_from_slice(&relationship.to_le_bytes());
        r[4..8].copy_from_slice(&size.to_le_bytes());
        r
    }

    const UNIFIED: i32 = 0;
    const INSTRUCTION: i32 = 1;
    const DATA: i32 = 2;
    const TRACE: i32 = 3;

    /// This host's caches (an AMD EPYC VM: 2 CPUs, 32 KiB L1d and L1i and 1 MiB L2
    /// each, one 32 MiB L3) as wine 8.0 lists them from sysfs (392 bytes: every
    /// instance, the shared L3 once), with a processor-core record added in the middle
    /// as `RelationAll` would give.
    fn win_host(mask_bytes: usize) -> (Vec<u8>, Vec<usize>) {
        let records = [
            win_cache(mask_bytes, (1, DATA, 32 << 10), 1, &[(0, 0b01)], 0),
            win_cache(mask_bytes, (1, INSTRUCTION, 32 << 10), 1, &[(0, 0b01)], 0),
            win_cache(mask_bytes, (2, UNIFIED, 1 << 20), 1, &[(0, 0b01)], 0),
            win_cache(mask_bytes, (3, UNIFIED, 32 << 20), 1, &[(0, 0b11)], 0),
            win_other(0, 48),
            win_cache(mask_bytes, (1, DATA, 32 << 10), 1, &[(0, 0b10)], 0),
            win_cache(mask_bytes, (1, INSTRUCTION, 32 << 10), 1, &[(0, 0b10)], 0),
            win_cache(mask_bytes, (2, UNIFIED, 1 << 20), 1, &[(0, 0b10)], 0),
        ];
        let mut bounds = vec![0];
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(&r);
            bounds.push(bytes.len());
        }
        (bytes, bounds)
    }

    #[test]
    fn windows_records_give_processor_0s_data_and_unified_caches() {
        for mask_bytes in [8, 4] {
            let (bytes, _) = win_host(mask_bytes);
            let caches = parse_windows_caches_with(&bytes, mask_bytes).unwrap();
            assert_eq!(
                caches,
                [llc(1, 32 << 10, 1), llc(2, MIB, 1), llc(3, 32 * MIB, 2)]
            );
            let t = CacheTopology::from_caches(&caches, 2, CacheSource::Windows);
            assert_eq!(
                t.to_string(),
                "L3 32 MiB shared by 2 CPUs, L2 1 MiB per CPU (windows)"
            );
        }
        let (bytes, _) = win_host(std::mem::size_of::<usize>());
        assert_eq!(
            parse_windows_caches(&bytes),
            parse_windows_caches_with(&bytes, std::mem::size_of::<usize>())
        );
        // No records: no caches, and no topology.
        assert_eq!(parse_windows_caches_with(&[], 8), Some(vec![]));
        let none = CacheTopology::from_caches(&[], 2, CacheSource::Windows);
        assert_eq!(none.source, CacheSource::None);
        // Only other relationships.
        assert_eq!(
            parse_windows_caches_with(&win_other(3, 80), 8),
            Some(vec![])
        );
        // Masks are 4 or 8 bytes.
        for junk in [0, 2, 16] {
            assert_eq!(parse_windows_caches_with(&bytes, junk), None);
        }
    }

    #[test]
    fn windows_instruction_trace_and_level_0_caches_do_not_count() {
        for (level, kind) in [(1, INSTRUCTION), (2, TRACE), (0, UNIFIED), (3, 7), (3, -1)] {
            let r = win_cache(8, (level, kind, 1 << 20), 1, &[(0, 1)], 0);
            assert_eq!(
                parse_windows_caches_with(&r, 8),
                Some(vec![]),
                "{level} {kind}"
            );
        }
        let r = win_cache(8, (2, DATA, 0), 1, &[(0, 1)], 0);
        assert_eq!(parse_windows_caches_with(&r, 8), Some(vec![llc(2, 0, 1)]));
    }

    #[test]
    fn windows_masks_count_across_groups() {
        // An L3 over all 64 CPUs of group 0 and 4 of group 1 (GroupCount 2, Windows 11).
        let r = win_cache(8, (3, UNIFIED, 256 << 20), 2, &[(0, u64::MAX), (1, 0xf)], 0);
        assert_eq!(
            parse_windows_caches_with(&r, 8),
            Some(vec![llc(3, 256 * MIB, 68)])
        );
        // The same with 32-bit masks: 32 + 4.
        let r = win_cache(4, (3, UNIFIED, 256 << 20), 2, &[(0, u64::MAX), (1, 0xf)], 0);
        assert_eq!(
            parse_windows_caches_with(&r, 4),
            Some(vec![llc(3, 256 * MIB, 36)])
        );
        // GroupCount 0 (before Windows 11): one mask.
        let r = win_cache(8, (2, UNIFIED, 1 << 20), 0, &[(0, 0b11)], 0);
        assert_eq!(parse_windows_caches_with(&r, 8), Some(vec![llc(2, MIB, 2)]));
        // Processor 0 in the second mask, listed first in group 1.
        let r = win_cache(8, (3, UNIFIED, 8 << 20), 2, &[(1, 0b1), (0, 0b1)], 0);
        assert_eq!(
            parse_windows_caches_with(&r, 8),
            Some(vec![llc(3, 8 * MIB, 2)])
        );
        // Caches that processor 0 does not use: group 1's CPU 0, another core, none.
        for masks in [&[(1u16, 1u64)][..], &[(0, 0b10)], &[(0, 0)]] {
            let r = win_cache(8, (2, UNIFIED, 1 << 20), 1, masks, 0);
            assert_eq!(parse_windows_caches_with(&r, 8), Some(vec![]), "{masks:?}");
        }
        // A hybrid processor: processor 0's L2 (a P-core's, 2 threads), not the larger
        // one of a cluster of 4 E-cores.
        let mut bytes = win_cache(8, (2, UNIFIED, 2 << 20), 1, &[(0, 0xf0)], 0);
        bytes.extend(win_cache(8, (2, UNIFIED, 1280 << 10), 1, &[(0, 0b11)], 0));
        bytes.extend(win_cache(8, (3, UNIFIED, 24 << 20), 1, &[(0, 0xff)], 0));
        let caches = parse_windows_caches_with(&bytes, 8).unwrap();
        let t = CacheTopology::from_caches(&caches, 8, CacheSource::Windows);
        assert_eq!(t.l2, Some(llc(2, 1280 << 10, 2)));
        assert_eq!(t.last_level, Some(llc(3, 24 * MIB, 8)));
    }

    #[test]
    fn windows_sizes_are_checked_against_the_buffer() {
        for mask_bytes in [8, 4] {
            let (bytes, bounds) = win_host(mask_bytes);
            // Cut anywhere: well formed only at a record's end.
            for cut in 0..=bytes.len() {
                let parsed = parse_windows_caches_with(&bytes[..cut], mask_bytes);
                assert_eq!(parsed.is_some(), bounds.contains(&cut), "cut at {cut}");
            }
            // Any byte of the list set to 0x00, 0x7f or 0xff: no panic, and no end past
            // the buffer.
            for at in 0..bytes.len() {
                for value in [0x00, 0x7f, 0xff] {
                    let mut junk = bytes.clone();
                    junk[at] = value;
                    let _ = parse_windows_caches_with(&junk, mask_bytes);
                }
            }
        }
        let good = win_cache(8, (3, UNIFIED, 8 << 20), 1, &[(0, 1)], 0);
        let with_size = |size: u32| {
            let mut r = good.clone();
            r[4..8].copy_from_slice(&size.to_le_bytes());
            r
        };
        // Sizes of 0 (which would never advance), under a header, beyond the buffer.
        for size in [0, 1, 7, 57, 4096, u32::MAX] {
            assert_eq!(
                parse_windows_caches_with(&with_size(size), 8),
                None,
                "{size}"
            );
        }
        // A header alone, or a cache record without room for its mask.
        assert_eq!(parse_windows_caches_with(&with_size(8)[..8], 8), None);
        assert_eq!(parse_windows_caches_with(&with_size(40)[..40], 8), None);
        assert_eq!(parse_windows_caches_with(&with_size(55)[..55], 8), None);
        // A GroupCount of 3 with room for one mask: the masks do not fit the record,
        // even though the buffer has bytes after it.
        let mut r = win_cache(8, (3, UNIFIED, 8 << 20), 3, &[(0, 1)], 0);
        r.extend(win_cache(8, (2, UNIFIED, 1 << 20), 1, &[(0, 1)], 0));
        assert_eq!(parse_windows_caches_with(&r, 8), None);
        // Bytes after the last record, too few for a header.
        let mut r = good.clone();
        r.extend([0; 4]);
        assert_eq!(parse_windows_caches_with(&r, 8), None);
        // A record larger than its structure (padding), within the buffer, is fine, and
        // the next one is read where its Size says.
        let mut r = win_cache(8, (2, UNIFIED, 1 << 20), 1, &[(0, 1)], 24);
        r.extend(&good);
        assert_eq!(
            parse_windows_caches_with(&r, 8),
            Some(vec![llc(2, MIB, 1), llc(3, 8 * MIB, 1)])
        );
        // A record of another relationship whose Size runs past the buffer.
        let mut r = good.clone();
        r.extend(&win_other(0, 48)[..40]);
        assert_eq!(parse_windows_caches_with(&r, 8), None);
    }

    /// Wine implements the call from the host's sysfs; real Windows from its own tables.
    #[cfg(windows)]
    #[test]
    fn windows_describes_a_last_level_cache() {
        let cpus = crate::parallel::available_cores();
        let records = windows_cache_records().expect("GetLogicalProcessorInformationEx");
        let caches = parse_windows_caches(&records).expect("well-formed records");
        let t = read_windows(cpus).expect("a last-level cache");
        assert_eq!(t.source, CacheSource::Windows);
        let llc = t.last_level.unwrap();
        assert!(llc.level >= 2 && llc.size_bytes > 0, "{t}");
        assert!(llc.shared_by >= 1, "{t}");
        assert_eq!(CacheTopology::host().source, CacheSource::Windows);
        eprintln!(
            "GetLogicalProcessorInformationEx: {} bytes, {caches:?}: {t}",
            records.len()
        );
    }

    #[test]
    fn the_last_level_is_the_highest_data_or_unified_level() {
        let t = topology(
            &[
                llc(1, 32 << 10, 1),
                llc(2, 512 << 10, 1),
                llc(3, 8 * MIB, 2),
            ],
            2,
        );
        assert_eq!(t.last_level, Some(llc(3, 8 * MIB, 2)));
        assert_eq!(t.l2, Some(llc(2, 512 << 10, 1)));
        assert_eq!(t.source, CacheSource::Sysfs);
        assert_eq!(
            t.to_string(),
            "L3 8 MiB shared by 2 CPUs, L2 512 KiB per CPU (sysfs)"
        );
        let only_l1 = topology(&[llc(1, 32 << 10, 1)], 4);
        assert_eq!(only_l1.last_level, None);
        assert_eq!(only_l1.source, CacheSource::None);
        assert_eq!(only_l1.to_string(), "unknown (none)");
        let empty = topology(&[llc(3, 0, 2), llc(2, 1 << 20, 0)], 4);
        assert_eq!(empty.last_level, Some(llc(2, 1 << 20, 0)));
        assert_eq!(empty.to_string(), "L2 1 MiB (sysfs)");
    }

    #[test]
    fn zen1_ccx_streams_above_six_mib() {
        // 8 MiB of L3 per CCX, shared by 4 cores / 8 threads; in this host's VM, by 2.
        for shared_by in [8, 2] {
            let t = topology(&[llc(2, 512 << 10, 2), llc(3, 8 * MIB, shared_by)], 2);
            for threads in [1, 2, 16] {
                assert_eq!(t.stream_threshold(threads), 6 * MIB);
            }
        }
        // On the whole 32-thread chip (4 CCXs), 32 threads use all four L3s.
        let chip = topology(&[llc(3, 8 * MIB, 8)], 32);
        assert_eq!(chip.stream_threshold(1), 6 * MIB);
        assert_eq!(chip.stream_threshold(8), 6 * MIB);
        assert_eq!(chip.stream_threshold(9), 12 * MIB);
        assert_eq!(chip.stream_threshold(32), 24 * MIB);
        assert_eq!(chip.stream_threshold(128), 24 * MIB);
        // A SIGN of 1 Mi float32 (8 MiB in + out) streams; 512 Ki do not.
        let at = StreamThreshold::Above(chip.stream_threshold(2));
        assert!(at.streams(8 * MIB) && !at.streams(4 * MIB) && !at.streams(6 * MIB));
    }

    #[test]
    fn zen4_ccd_keeps_what_fits_in_its_32_mib() {
        // 32 MiB of L3 per CCD, shared by 8 cores / 16 threads; in a 2-CPU VM, by 2.
        for (shared_by, cpus) in [(16, 32), (2, 2)] {
            let t = topology(&[llc(2, MIB, 2), llc(3, 32 * MIB, shared_by)], cpus);
            let one = StreamThreshold::Above(t.stream_threshold(2));
            assert_eq!(one.bytes(), Some(24 * MIB));
            // The losing rows: 1 Mi float64 / int64 (16 MiB moved) stay plain.
            assert!(!one.streams(16 * MIB));
            assert!(one.streams(64 * MIB));
        }
    }

    #[test]
    fn intel_counts_the_l2s_of_the_threads_not_the_l3() {
        // This Emerald Rapids VM: 2 MiB of L2 per CPU, 300 MiB of L3 seen as shared by 2.
        let caches = [llc(2, 2 * MIB, 1), llc(3, 300 * MIB, 2)];
        let t = topology(&caches, 2).with_vendor(Vendor::Intel);
        assert!(!t.counts_last_level());
        assert_eq!(t.stream_threshold(1), 2 * MIB);
        assert_eq!(t.stream_threshold(2), 4 * MIB);
        assert_eq!(t.stream_threshold(64), 4 * MIB);
        // SIGN of 1 Mi float32 (8 MiB moved) streams on 2 threads; 256 Ki do not.
        let at = StreamThreshold::Above(t.stream_threshold(2));
        assert!(at.streams(8 * MIB) && !at.streams(4 * MIB));
        // Hyper-threads share an L2: 4 threads on 2 cores use two of them.
        let ht = topology(&[llc(2, 2 * MIB, 2), llc(3, 105 * MIB, 112)], 112);
        let ht = ht.with_vendor(Vendor::Intel);
        assert_eq!(ht.stream_threshold(1), 2 * MIB);
        assert_eq!(ht.stream_threshold(4), 4 * MIB);
        // The same caches from another vendor: 3/4 of the L3.
        let other = topology(&caches, 2);
        assert!(other.counts_last_level());
        assert_eq!(other.stream_threshold(2), 225 * MIB);
        // Intel without an L3, or without a known L2: the last-level rule.
        let no_l3 = topology(&[llc(2, 4 * MIB, 4)], 8).with_vendor(Vendor::Intel);
        assert!(no_l3.counts_last_level());
        assert_eq!(no_l3.stream_threshold(1), 3 * MIB);
        let no_l2 = topology(&[llc(3, 8 * MIB, 2)], 2).with_vendor(Vendor::Intel);
        assert_eq!(no_l2.stream_threshold(1), 6 * MIB);
    }

    #[test]
    fn vendors_come_from_cpuid_leaf_0() {
        let name = |s: &[u8; 12]| {
            let w = |k: usize| u32::from_le_bytes([s[k], s[k + 1], s[k + 2], s[k + 3]]);
            Vendor::from_cpuid_name(w(0), w(4), w(8))
        };
        assert_eq!(name(b"GenuineIntel"), Vendor::Intel);
        assert_eq!(name(b"AuthenticAMD"), Vendor::Other);
        assert_eq!(name(b"HygonGenuine"), Vendor::Other);
        assert_eq!(name(&[0; 12]), Vendor::Other);
    }

    #[test]
    fn a_laptop_with_2_mib_of_l3_streams_early() {
        let t = topology(&[llc(2, 256 << 10, 2), llc(3, 2 * MIB, 4)], 4);
        assert_eq!(t.stream_threshold(1), 1536 << 10);
        assert_eq!(t.stream_threshold(4), 1536 << 10);
        assert_eq!(human_bytes(t.stream_threshold(4)), "1.5 MiB");
    }

    #[test]
    fn without_l3_the_l2_is_the_last_level() {
        let t = topology(&[llc(1, 64 << 10, 1), llc(2, 4 * MIB, 4)], 8);
        assert_eq!(t.last_level, Some(llc(2, 4 * MIB, 4)));
        assert_eq!(t.stream_threshold(1), 3 * MIB);
        assert_eq!(t.stream_threshold(8), 6 * MIB);
    }

    #[test]
    fn without_cache_information_the_old_rule_holds() {
        let t = CacheTopology::unknown(0);
        assert_eq!(t.cpus, 1);
        assert_eq!(t.source, CacheSource::None);
        for threads in [0, 1, 64] {
            assert_eq!(t.stream_threshold(threads), FALLBACK_STREAM_THRESHOLD_BYTES);
        }
        assert_eq!(topology(&[], 4), CacheTopology::unknown(4));
        // Unknown sharing counts as one CPU per cache.
        let t = topology(&[llc(3, 4 * MIB, 0)], 2);
        assert_eq!(t.stream_threshold(1), 3 * MIB);
        assert_eq!(t.stream_threshold(2), 6 * MIB);
    }

    #[test]
    fn huge_caches_saturate() {
        let t = topology(&[llc(3, u64::MAX, 1)], 4);
        assert!(t.stream_threshold(4) >= u64::MAX / 4 * 3);
    }

    #[test]
    fn overrides_parse() {
        use StreamThreshold::{Above, Never};
        assert_eq!(StreamThreshold::parse("0"), Some(Above(0)));
        assert_eq!(StreamThreshold::parse(" 24Mi "), Some(Above(24 * MIB)));
        assert_eq!(StreamThreshold::parse("1048576"), Some(Above(MIB)));
        assert_eq!(StreamThreshold::parse("never"), Some(Never));
        assert_eq!(StreamThreshold::parse("OFF"), Some(Never));
        for junk in ["", "yes", "-5", "1e6", "12Ti", "never!"] {
            assert_eq!(StreamThreshold::parse(junk), None, "{junk:?}");
        }
        assert!(Above(0).streams(1) && !Above(0).streams(0));
        assert!(!Never.streams(u64::MAX));
        assert_eq!(Above(6 * MIB).to_string(), "above 6 MiB");
        assert_eq!(Never.to_string(), "never");
        assert_eq!(Never.bytes(), None);
    }

    #[test]
    fn the_host_reads_without_failing() {
        let host = CacheTopology::host();
        assert!(host.cpus >= 1);
        assert_eq!(host.last_level.is_some(), host.source != CacheSource::None);
        assert!(host.stream_threshold(1) > 0);
        #[cfg(target_arch = "x86_64")]
        {
            // CPUID agrees with sysfs and Windows on the last level's size where both
            // answer.
            let cpuid = read_cpuid(host.cpus);
            for system in [read_sysfs(host.cpus), read_windows(host.cpus)] {
                if let (Some(system), Some(cpuid)) = (system, cpuid) {
                    assert_eq!(
                        system.last_level.map(|c| (c.level, c.size_bytes)),
                        cpuid.last_level.map(|c| (c.level, c.size_bytes))
                    );
                }
            }
        }
    }
}
