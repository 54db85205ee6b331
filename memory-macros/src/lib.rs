//! The `#[remember]` attribute of [agentmemory](https://docs.rs/agentmemory).
//!
//! Use it through the facade (`use agentmemory::remember;`); this crate only holds the macro.
//! The pipeline is parse (`args`) → check (`valid`) → generate (`expand`); errors are
//! collected in a `ctxt::Ctxt` and reported together.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod args;
mod ctxt;
mod expand;
mod suggest;
mod valid;

use proc_macro::TokenStream;

/// Declares how an agent struct uses long-term (user) memory by implementing
/// `agentmemory::Remember` for it.
///
/// ```text
/// #[remember(
///     store = "user_memory",            // DI token of the UserMemoryStore; default: the only one registered
///     extract = true,                   // extract facts from each turn; default true
///     inject = true,                    // inject relevant facts into the system prompt; default true
///     top_k = 5,                        // at most this many facts injected; default 5, at least 1
///     recall = 5,                       // at most this many earlier messages (episodes) recalled
///                                       //   into the memory block; default 5, 0 turns recall off
///     extraction_model = "small-model", // model used for extraction; default: the agent's own
///     crate = "my_reexport::agentmemory",  // where agentmemory is reachable; default `::agentmemory`
/// )]
/// ```
///
/// Every argument is optional and `#[remember]` alone takes all defaults. The struct is left
/// exactly as written (attributes, docs, generics, where clauses); only an impl is added. Any
/// mistake (unknown or repeated argument, wrong literal, `top_k = 0`, an empty name, an item
/// that is not a struct) is a compile error at the offending token, all reported at once; so
/// is an argument that cannot take effect (`top_k` or `recall` with `inject = false`,
/// `extraction_model` with `extract = false`).
///
/// The generated code reaches the runtime through `<crate>::__private`, a hidden module of the
/// `agentmemory` facade; `crate = "…"` points it at a re-export. Here it is pointed at a local
/// module that provides the same items:
///
/// ```
/// mod runtime {
///     pub mod __private {
///         pub use agentmemory_core::{Remember, RememberSpec};
///     }
/// }
///
/// /// A support agent that remembers the user.
/// #[agentmemory_macros::remember(store = "user_memory", top_k = 3, recall = 5, crate = "runtime")]
/// #[derive(Debug, Default)]
/// struct Support {
///     name: String,
/// }
///
/// use agentmemory_core::{Remember, RememberSpec};
/// assert_eq!(
///     <Support as Remember>::SPEC,
///     Some(RememberSpec::new().store("user_memory").top_k(3).recall(5))
/// );
/// assert_eq!(<Support as Remember>::SPEC.map(|spec| spec.recall), Some(5));
/// # let _ = Support::default().name;
/// ```
#[proc_macro_attribute]
pub fn remember(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::remember(args.into(), item.into()).into()
}
