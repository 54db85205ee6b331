//! The packed form of the encoder's weights: one flat run of `f32` values, tensor after
//! tensor, each already in the layout the forward pass reads (matrices input-major, the
//! query, key and value projections fused, token type 0's row alone).
//!
//! The same layout is filled from `model.safetensors` and read back from the
//! packed-weights file (`packed.rs`), so changing the order, or what a tensor holds, here
//! changes that file's format: bump [`FORMAT_VERSION`](super::packed::FORMAT_VERSION)
//! with it.

use std::ops::Range;

/// The sizes that place every tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) vocab: usize,
    pub(crate) hidden: usize,
    pub(crate) layers: usize,
    pub(crate) intermediate: usize,
    pub(crate) max_positions: usize,
}

/// The encoder's tensors, as `T`: the tensors themselves, or where they sit in the packed
/// form (`Range<usize>`, in values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Weights<T> {
    /// `[vocab][hidden]`.
    pub(crate) word: T,
    /// `[max_positions][hidden]`.
    pub(crate) position: T,
    /// Token type 0's embedding, `[hidden]`: single sentences never use another.
    pub(crate) token_type: T,
    pub(crate) embed_norm_w: T,
    pub(crate) embed_norm_b: T,
    pub(crate) layers: Vec<Layer<T>>,
}

/// One encoder layer's tensors; matrices are input-major (`[in][out]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer<T> {
    /// Query, key and value side by side: `[hidden][3 · hidden]`.
    pub(crate) qkv_w: T,
    pub(crate) qkv_b: T,
    /// `[hidden][hidden]`.
    pub(crate) attn_out_w: T,
    pub(crate) attn_out_b: T,
    pub(crate) attn_norm_w: T,
    pub(crate) attn_norm_b: T,
    /// `[hidden][intermediate]`.
    pub(crate) up_w: T,
    pub(crate) up_b: T,
    /// `[intermediate][hidden]`.
    pub(crate) down_w: T,
    pub(crate) down_b: T,
    pub(crate) out_norm_w: T,
    pub(crate) out_norm_b: T,
}

impl Shape {
    /// How many values the packed form of an encoder of this shape holds; `None` when
    /// that count overflows.
    pub(crate) fn values(self) -> Option<usize> {
        let h = self.hidden;
        let i = self.intermediate;
        let square = h.checked_mul(h)?;
        // qkv 3h², attention output h², up and down 2hi; biases and norms 9h + i.
        let per_layer = square
            .checked_mul(4)?
            .checked_add(h.checked_mul(i)?.checked_mul(2)?)?
            .checked_add(h.checked_mul(9)?)?
            .checked_add(i)?;
        self.vocab
            .checked_add(self.max_positions)?
            .checked_add(3)?
            .checked_mul(h)?
            .checked_add(self.layers.checked_mul(per_layer)?)
    }
}

impl Weights<Range<usize>> {
    /// Where each tensor of an encoder of `shape` sits, and how many values the packed
    /// form holds; `None` when that is more than `available` (the values the data at hand
    /// can hold, which also bounds the per-layer bookkeeping) or overflows.
    pub(crate) fn layout(shape: Shape, available: usize) -> Option<(Self, usize)> {
        if shape.values()? > available {
            return None;
        }
        let Shape {
            vocab,
            hidden: h,
            layers,
            intermediate: i,
            max_positions,
        } = shape;
        let mut next = Cursor(0);
        let word = next.take(vocab * h);
        let position = next.take(max_positions * h);
        let token_type = next.take(h);
        let embed_norm_w = next.take(h);
        let embed_norm_b = next.take(h);
        let layers = (0..layers)
            .map(|_| Layer {
                qkv_w: next.take(3 * h * h),
                qkv_b: next.take(3 * h),
                attn_out_w: next.take(h * h),
                attn_out_b: next.take(h),
                attn_norm_w: next.take(h),
                attn_norm_b: next.take(h),
                up_w: next.take(h * i),
                up_b: next.take(i),
                down_w: next.take(i * h),
                down_b: next.take(h),
                out_norm_w: next.take(h),
                out_norm_b: next.take(h),
            })
            .collect();
        let weights = Weights {
            word,
            position,
            token_type,
            embed_norm_w,
            embed_norm_b,
            layers,
        };
        Some((weights, next.0))
    }
}

/// The next free value of a layout being laid out (within [`Shape::values`], so no sum
/// overflows).
struct Cursor(usize);

impl Cursor {
    /// The next `len` values.
    fn take(&mut self, len: usize) -> Range<usize> {
        let start = self.0;
        self.0 += len;
        start..self.0
    }
}

impl<T> Weights<T> {
    /// Every tensor passed through `f`, in layout order; the first error stops it.
    pub(crate) fn try_map<U, E>(
        self,
        mut f: impl FnMut(T) -> Result<U, E>,
    ) -> Result<Weights<U>, E> {
        Ok(Weights {
            word: f(self.word)?,
            position: f(self.position)?,
            token_type: f(self.token_type)?,
            embed_norm_w: f(self.embed_norm_w)?,
            embed_norm_b: f(self.embed_norm_b)?,
            layers: self
                .layers
                .into_iter()
                .map(|layer| layer.try_map(&mut f))
                .collect::<Result<_, E>>()?,
        })
    }
}

impl<T> Layer<T> {
    fn try_map<U, E>(self, f: &mut impl FnMut(T) -> Result<U, E>) -> Result<Layer<U>, E> {
        Ok(Layer {
            qkv_w: f(self.qkv_w)?,
            qkv_b: f(self.qkv_b)?,
            attn_out_w: f(self.attn_out_w)?,
            attn_out_b: f(self.attn_out_b)?,
            attn_norm_w: f(self.attn_norm_w)?,
            attn_norm_b: f(self.attn_norm_b)?,
            up_w: f(self.up_w)?,
            up_b: f(self.up_b)?,
            down_w: f(self.down_w)?,
            down_b: f(self.down_b)?,
            out_norm_w: f(self.out_norm_w)?,
            out_norm_b: f(self.out_norm_b)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Shape = Shape {
        vocab: 30,
        hidden: 8,
        layers: 2,
        intermediate: 16,
        max_positions: 16,
    };

    #[test]
    fn tensors_follow_each_other_without_gaps_or_overlap() {
        let (layout, total) = Weights::layout(TINY, usize::MAX).unwrap();
        let mut ranges = Vec::new();
        let _ = layout.try_map(|r| {
            ranges.push(r);
            Ok::<_, ()>(())
        });
        let (h, i) = (8, 16);
        let per_layer = 3 * h * h + 3 * h + h * h + 3 * h + h * i + i + i * h + 3 * h;
        assert_eq!(total, 30 * h + 16 * h + 3 * h + 2 * per_layer);
        let mut at = 0;
        for r in &ranges {
            assert_eq!(r.start, at, "{ranges:?}");
            at = r.end;
        }
        assert_eq!(at, total);
        assert_eq!(Some(total), TINY.values());
        assert_eq!(ranges.len(), 5 + 2 * 12);
        // Exactly as many values as the data holds is enough; one fewer is not.
        assert!(Weights::layout(TINY, total).is_some());
        assert_eq!(Weights::layout(TINY, total - 1), None);
    }

    #[test]
    fn an_overflowing_or_oversized_shape_has_no_layout() {
        let wide = Shape {
            vocab: usize::MAX / 2,
            ..TINY
        };
        assert_eq!(wide.values(), None);
        assert_eq!(Weights::layout(wide, usize::MAX), None);
        // Countable, but more layers than any data holds: refused before any is laid out.
        let deep = Shape {
            layers: usize::MAX / 1024,
            ..TINY
        };
        assert!(deep.values().is_some());
        assert_eq!(Weights::layout(deep, 1 << 30), None);
    }
}
