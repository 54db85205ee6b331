#![deny(missing_docs)]
//! A crate whose items must all be documented: the struct keeps its docs.

use agentmemory::{remember, Remember, RememberSpec};

/// A tutor that remembers what the student already knows.
///
/// Second paragraph.
#[remember(store = "students")]
pub struct Tutor {
    /// The subject taught.
    pub subject: &'static str,
}

#[doc = "Docs written as an attribute."]
#[remember]
pub struct Quiet;

/// The entry point.
fn main() {
    let tutor = Tutor { subject: "maths" };
    assert_eq!(tutor.subject, "maths");
    let _ = Quiet;
    assert_eq!(<Tutor as Remember>::SPEC, Some(RememberSpec::new().store("students")));
    assert_eq!(<Quiet as Remember>::SPEC, Some(RememberSpec::new()));
}
