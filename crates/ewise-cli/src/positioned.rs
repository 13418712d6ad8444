//! Reads and writes at given offsets of a file, leaving no position behind that a later
//! call depends on: `pread`/`pwrite` on Unix, `ReadFile`/`WriteFile` with an offset on
//! Windows (which also move the handle's cursor; nothing here uses the cursor).

use std::fs::File;
use std::io;

/// Bytes read at given offsets.
pub trait ReadAt {
    /// Fills `buf` with the bytes from `offset` on; `UnexpectedEof` if the file ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

/// Bytes written at given offsets.
pub trait WriteAt {
    /// Writes all of `buf` from `offset` on (a file shorter than that grows).
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
}

#[cfg(unix)]
impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

#[cfg(unix)]
impl WriteAt for File {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl ReadAt for File {
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.seek_read(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(windows)]
impl WriteAt for File {
    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.seek_write(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(not(any(unix, windows)))]
impl ReadAt for File {
    fn read_exact_at(&self, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

#[cfg(not(any(unix, windows)))]
impl WriteAt for File {
    fn write_all_at(&self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_land_at_their_offsets_whatever_the_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [0u8; 16]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        file.write_all_at(&[7, 8], 10).unwrap();
        file.write_all_at(&[1, 2, 3], 0).unwrap();
        let mut got = [0u8; 4];
        file.read_exact_at(&mut got, 9).unwrap();
        assert_eq!(got, [0, 7, 8, 0]);
        file.read_exact_at(&mut got[..3], 0).unwrap();
        assert_eq!(got[..3], [1, 2, 3]);
        let err = file.read_exact_at(&mut got, 14).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(std::fs::read(&path).unwrap().len(), 16);
    }
}
