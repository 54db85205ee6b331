//! The packed-weights file: the encoder's weights in their packed form
//! ([`layout`](super::layout)), written once by the load that converts `model.safetensors`
//! and memory-mapped by every later one, so a process start neither reads and converts
//! the 90 MB of weights nor keeps a private copy of them (the mapped pages are the page
//! cache's, shared by every process using the model).
//!
//! Format, little-endian, version [`FORMAT_VERSION`]:
//!
//! | offset | bytes | field                                                          |
//! |-------:|------:|----------------------------------------------------------------|
//! |      0 |     8 | magic `AGMPACK\0`                                              |
//! |      8 |     4 | format version                                                 |
//! |     12 |     4 | header length: where the values start (128)                    |
//! |     16 |     8 | size of the `model.safetensors` packed                         |
//! |     24 |    16 | its modification time, nanoseconds since the Unix epoch (i128) |
//! |     40 |    40 | vocabulary, hidden, layers, intermediate, positions (u64 each) |
//! |     80 |     8 | number of values                                               |
//! |     88 |     8 | xxh3-64 of the header (this field zero) and the values         |
//! |     96 |     8 | its inode number (Unix; else zero)                             |
//! |    104 |    16 | its status change time, nanoseconds (Unix `ctime`; else zero)  |
//! |    120 |     8 | zero                                                           |
//! |    128 |  4 · n | the values, `f32`                                             |
//!
//! A file is used only when all of it checks out: magic and version, the identity of the
//! `model.safetensors` it is used with (size, modification time and, on Unix, inode and
//! status change time, which no copy, rename over or rewrite keeps), the shape the
//! configuration gives, the length, and the checksum over every byte. Anything else (a
//! file of another model or format, cut short or damaged) is a [`PackedError`], and the
//! loader packs the weights again from the model.
//!
//! A file is only ever replaced whole, by renaming a complete new file over it, never
//! written in place: a process that has the old one mapped keeps reading the old one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use memmap2::{Mmap, MmapOptions};
use xxhash_rust::xxh3::Xxh3;

use super::layout::Shape;

/// The file's name beside the model.
pub(crate) const FILE_NAME: &str = "model.agentmem-f32.packed";

/// The version of the format (the header and [`layout`](super::layout)); a file of
/// another version is never read.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// Whether packed-weights files are read and written at all: their values are
/// little-endian `f32` read in place, and Miri cannot map files.
pub(crate) const ENABLED: bool = cfg!(all(target_endian = "little", not(miri)));

const MAGIC: [u8; 8] = *b"AGMPACK\0";
/// Also the alignment of the values in the file (a multiple of 64 bytes, a cache line).
const HEADER_LEN: usize = 128;
const CHECKSUM_AT: Range<usize> = 88..96;

/// Why a packed-weights file was not used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PackedError {
    #[error("cannot read it: {0}")]
    Io(#[from] io::Error),
    #[error("not a packed-weights file")]
    NotPacked,
    #[error("format version {found}, this build reads {FORMAT_VERSION}")]
    Version { found: u32 },
    #[error("packed from another model.safetensors (size or modification time differs)")]
    SourceChanged,
    #[error("packed for another configuration ({found:?}, the configuration gives {expected:?})")]
    Shape { found: Shape, expected: Shape },
    #[error("the header's count of values does not match its shape")]
    Inconsistent,
    #[error("{found} bytes, {expected} expected (cut short or grown)")]
    Length { found: u64, expected: u64 },
    #[error("checksum mismatch: the file is damaged")]
    Checksum,
    #[error("the values are not aligned for f32")]
    Misaligned,
    #[error("packed-weights files are not used on this platform")]
    Disabled,
}

/// What identifies the `model.safetensors` a file was packed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Source {
    len: u64,
    /// Nanoseconds since the Unix epoch (negative before it).
    modified: i128,
    /// The inode number, on Unix (else 0).
    inode: u64,
    /// The status change time in nanoseconds since the Unix epoch, on Unix (else 0).
    changed: i128,
}

impl Source {
    /// The identity of the file at `path`, from its metadata.
    pub(crate) fn of(path: &Path) -> io::Result<Self> {
        let metadata = fs::metadata(path)?;
        let modified = match metadata.modified()?.duration_since(UNIX_EPOCH) {
            Ok(after) => i128::try_from(after.as_nanos()),
            Err(before) => i128::try_from(before.duration().as_nanos()).map(|n| -n),
        }
        .map_err(|_| io::Error::other("modification time out of range"))?;
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (
                metadata.ino(),
                i128::from(metadata.ctime()) * 1_000_000_000 + i128::from(metadata.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (inode, changed) = (0, 0);
        Ok(Self {
            len: metadata.len(),
            modified,
            inode,
            changed,
        })
    }
}

/// A packed-weights file, mapped and checked.
pub(crate) struct Mapped {
    map: Mmap,
    /// Where the values are, in bytes (aligned for `f32`, checked when mapped).
    values: Range<usize>,
}

impl Mapped {
    pub(crate) fn values(&self) -> &[f32] {
        bytemuck::cast_slice(&self.map[self.values.clone()])
    }
}

/// The file at `path` mapped, once it is known to hold the weights of the `source` model
/// in `shape`.
///
/// # Errors
///
/// A [`PackedError`] saying why it cannot be used; [`PackedError::Io`] with
/// [`io::ErrorKind::NotFound`] when there is no file.
pub(crate) fn open(path: &Path, source: Source, shape: Shape) -> Result<Mapped, PackedError> {
    if !ENABLED {
        return Err(PackedError::Disabled);
    }
    let file = File::open(path)?;
    let found = file.metadata()?.len();
    if found < HEADER_LEN as u64 {
        return Err(PackedError::Length {
            found,
            expected: HEADER_LEN as u64,
        });
    }
    // SAFETY: the mapping is read-only, and the bytes under it do not change while it is
    // mapped: `write` never writes into an existing file (it renames a new one over it,
    // and this mapping keeps the old one), and nothing else writes these files. Whatever
    // the bytes are, they are checked below (header, length, checksum) before use, and
    // every bit pattern is a valid `f32`. `populate` reads the pages in one go, as the
    // checksum is about to touch every one of them.
    let map = unsafe { MmapOptions::new().populate().map(&file)? };
    // Checked again on the mapping: the file may have been cut since.
    let header: &[u8; HEADER_LEN] = map
        .get(..HEADER_LEN)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or(PackedError::Length {
            found: map.len() as u64,
            expected: HEADER_LEN as u64,
        })?;
    let header = Header::read(header)?;
    if header.source != source {
        return Err(PackedError::SourceChanged);
    }
    if header.shape != shape {
        return Err(PackedError::Shape {
            found: header.shape,
            expected: shape,
        });
    }
    if Some(header.values) != shape.values() {
        return Err(PackedError::Inconsistent);
    }
    // The shape fits in memory as `f32`s: `Weights::layout` laid it out for the source.
    let expected = header
        .values
        .checked_mul(4)
        .and_then(|bytes| bytes.checked_add(HEADER_LEN))
        .ok_or(PackedError::Inconsistent)?;
    if map.len() != expected {
        return Err(PackedError::Length {
            found: map.len() as u64,
            expected: expected as u64,
        });
    }
    let values = &map[HEADER_LEN..];
    if checksum(&map[..HEADER_LEN], values) != header.checksum {
        return Err(PackedError::Checksum);
    }
    if bytemuck::try_cast_slice::<u8, f32>(values).is_err() {
        return Err(PackedError::Misaligned);
    }
    Ok(Mapped {
        map,
        values: HEADER_LEN..expected,
    })
}

/// Writes `values`, the packed weights of the `source` model in `shape`, to `path`:
/// into a new file beside it, then renamed over it, so a reader sees either the old file
/// or the whole new one. Creates the directory when missing.
pub(crate) fn write(path: &Path, source: Source, shape: Shape, values: &[f32]) -> io::Result<()> {
    if !ENABLED {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            PackedError::Disabled,
        ));
    }
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => (dir, name),
        _ => return Err(io::Error::other("not a file path")),
    };
    fs::create_dir_all(dir)?;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temporary = dir.join(format!(
        ".{}.{}-{}-{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let bytes: &[u8] = bytemuck::cast_slice(values);
    let mut header = Header {
        source,
        shape,
        values: values.len(),
        checksum: 0,
    }
    .bytes();
    let sum = checksum(&header, bytes);
    header[CHECKSUM_AT].copy_from_slice(&sum.to_le_bytes());

    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    let written = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&header)?;
        out.write_all(bytes)?;
        out.into_inner().map_err(io::IntoInnerError::into_error)?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// xxh3-64 of `header` (its checksum field taken as zero) and `values`.
fn checksum(header: &[u8], values: &[u8]) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(&header[..CHECKSUM_AT.start]);
    hasher.update(&[0; CHECKSUM_AT.end - CHECKSUM_AT.start]);
    hasher.update(&header[CHECKSUM_AT.end..HEADER_LEN]);
    hasher.update(values);
    hasher.digest()
}

/// The fields of a header.
#[derive(Debug, PartialEq, Eq)]
struct Header {
    source: Source,
    shape: Shape,
    values: usize,
    checksum: u64,
}

impl Header {
    fn bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0; HEADER_LEN];
        let shape = self.shape;
        out[0..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        out[16..24].copy_from_slice(&self.source.len.to_le_bytes());
        out[24..40].copy_from_slice(&self.source.modified.to_le_bytes());
        let sizes = [
            shape.vocab,
            shape.hidden,
            shape.layers,
            shape.intermediate,
            shape.max_positions,
            self.values,
        ];
        for (n, size) in sizes.into_iter().enumerate() {
            out[40 + 8 * n..48 + 8 * n].copy_from_slice(&(size as u64).to_le_bytes());
        }
        out[CHECKSUM_AT].copy_from_slice(&self.checksum.to_le_bytes());
        out[96..104].copy_from_slice(&self.source.inode.to_le_bytes());
        out[104..120].copy_from_slice(&self.source.changed.to_le_bytes());
        out
    }

    fn read(bytes: &[u8; HEADER_LEN]) -> Result<Self, PackedError> {
        if bytes[0..8] != MAGIC {
            return Err(PackedError::NotPacked);
        }
        let version = u32::from_le_bytes(array(bytes, 8));
        if version != FORMAT_VERSION {
            return Err(PackedError::Version { found: version });
        }
        let header_len = u32::from_le_bytes(array(bytes, 12));
        if header_len as usize != HEADER_LEN || bytes[120..].iter().any(|&b| b != 0) {
            return Err(PackedError::NotPacked);
        }
        // A size this platform cannot hold matches no shape: saturate.
        let size = |at| usize::try_from(u64::from_le_bytes(array(bytes, at))).unwrap_or(usize::MAX);
        Ok(Self {
            source: Source {
                len: u64::from_le_bytes(array(bytes, 16)),
                modified: i128::from_le_bytes(array(bytes, 24)),
                inode: u64::from_le_bytes(array(bytes, 96)),
                changed: i128::from_le_bytes(array(bytes, 104)),
            },
            shape: Shape {
                vocab: size(40),
                hidden: size(48),
                layers: size(56),
                intermediate: size(64),
                max_positions: size(72),
            },
            values: size(80),
            checksum: u64::from_le_bytes(array(bytes, CHECKSUM_AT.start)),
        })
    }
}

/// The `N` bytes of `header` from `at`, a field within it.
fn array<const N: usize>(header: &[u8; HEADER_LEN], at: usize) -> [u8; N] {
    header[at..at + N]
        .try_into()
        .expect("a field of N bytes within the header")
}

#[cfg(all(test, not(miri)))]
mod tests {
    use std::path::PathBuf;

    use super::*;

    const SHAPE: Shape = Shape {
        vocab: 30,
        hidden: 8,
        layers: 2,
        intermediate: 16,
        max_positions: 16,
    };

    /// A packed-weights file for `SHAPE` in a new directory, the source file it was
    /// packed from beside it, and its values.
    fn written() -> (tempfile::TempDir, PathBuf, Source, Vec<f32>) {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model.safetensors");
        fs::write(&model, b"the weights").unwrap();
        let source = Source::of(&model).unwrap();
        let values: Vec<f32> = (0..SHAPE.values().unwrap())
            .map(|v| v as f32 * 0.25 - 7.0)
            .collect();
        let path = dir.path().join(FILE_NAME);
        write(&path, source, SHAPE, &values).unwrap();
        (dir, path, source, values)
    }

    #[test]
    fn written_values_map_back_exactly() {
        let (_dir, path, source, values) = written();
        let mapped = open(&path, source, SHAPE).unwrap();
        assert_eq!(mapped.values(), &values[..]);
        // Header and values, nothing else, and no temporary file left behind.
        assert_eq!(
            fs::metadata(&path).unwrap().len() as usize,
            HEADER_LEN + 4 * values.len()
        );
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn no_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m");
        fs::write(&model, b"x").unwrap();
        let error = open(
            &dir.path().join(FILE_NAME),
            Source::of(&model).unwrap(),
            SHAPE,
        )
        .err()
        .unwrap();
        assert!(
            matches!(&error, PackedError::Io(e) if e.kind() == io::ErrorKind::NotFound),
            "{error}"
        );
    }

    #[test]
    fn another_source_or_shape_is_refused() {
        let (dir, path, source, _) = written();
        // The model rewritten: another size, and another modification time.
        let model = dir.path().join("model.safetensors");
        fs::write(&model, b"other weights").unwrap();
        let file = File::options().write(true).open(&model).unwrap();
        file.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .unwrap();
        let changed = Source::of(&model).unwrap();
        assert!(matches!(
            open(&path, changed, SHAPE),
            Err(PackedError::SourceChanged)
        ));
        // Same size and modification time, but another file (a copy put in its place).
        for other in [
            Source { len: 12, ..source },
            Source {
                modified: source.modified + 1,
                ..source
            },
            Source {
                inode: source.inode + 1,
                ..source
            },
            Source {
                changed: source.changed - 1,
                ..source
            },
        ] {
            assert!(matches!(
                open(&path, other, SHAPE),
                Err(PackedError::SourceChanged)
            ));
        }
        let wider = Shape {
            intermediate: 32,
            ..SHAPE
        };
        assert!(matches!(
            open(&path, source, wider),
            Err(PackedError::Shape { .. })
        ));
        assert!(open(&path, source, SHAPE).is_ok());
    }

    #[test]
    fn a_file_cut_short_grown_or_damaged_is_refused() {
        let (_dir, path, source, _) = written();
        let whole = fs::read(&path).unwrap();
        let refused = |bytes: &[u8]| {
            fs::write(&path, bytes).unwrap();
            open(&path, source, SHAPE).err().unwrap()
        };
        for cut in [
            0,
            7,
            HEADER_LEN - 1,
            HEADER_LEN,
            whole.len() / 2,
            whole.len() - 1,
        ] {
            let error = refused(&whole[..cut]);
            assert!(
                matches!(error, PackedError::Length { .. }),
                "{cut}: {error}"
            );
        }
        let mut grown = whole.clone();
        grown.extend_from_slice(&[0; 4]);
        assert!(matches!(refused(&grown), PackedError::Length { .. }));

        // One bit flipped anywhere: in the values, in the checksum, in reserved bytes.
        for at in [HEADER_LEN, HEADER_LEN + 1234, whole.len() - 1, 90, 125] {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x10;
            let error = refused(&damaged);
            assert!(
                matches!(error, PackedError::Checksum | PackedError::NotPacked),
                "byte {at}: {error}"
            );
        }
        let mut other = whole.clone();
        other[..8].copy_from_slice(b"PK\x03\x04zip!");
        assert!(matches!(refused(&other), PackedError::NotPacked));
        let mut newer = whole.clone();
        newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert!(matches!(refused(&newer), PackedError::Version { .. }));
        let mut inconsistent = whole.clone();
        inconsistent[80..88].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(refused(&inconsistent), PackedError::Inconsistent));

        fs::write(&path, &whole).unwrap();
        assert!(open(&path, source, SHAPE).is_ok());
    }

    #[test]
    fn rewriting_replaces_the_file_and_never_changes_a_mapped_one() {
        let (_dir, path, source, values) = written();
        let before = open(&path, source, SHAPE).unwrap();
        let doubled: Vec<f32> = values.iter().map(|v| v * 2.0).collect();
        write(&path, source, SHAPE, &doubled).unwrap();
        assert_eq!(before.values(), &values[..]);
        assert_eq!(open(&path, source, SHAPE).unwrap().values(), &doubled[..]);
    }

    #[test]
    fn a_place_that_cannot_be_written_is_an_error_and_leaves_nothing() {
        let (dir, _path, source, values) = written();
        // A directory where a file is wanted, and a file where a directory is.
        let occupied = dir.path().join("occupied");
        fs::create_dir(&occupied).unwrap();
        fs::write(occupied.join("inside"), b"x").unwrap();
        assert!(write(&occupied, source, SHAPE, &values).is_err());
        let under_file = dir.path().join("model.safetensors").join(FILE_NAME);
        assert!(write(&under_file, source, SHAPE, &values).is_err());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        assert!(fs::read_dir(&occupied).unwrap().count() == 1);
    }
}
