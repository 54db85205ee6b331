use agentmemory::{remember, Remember, RememberSpec};

// Derive placed before the attribute.
#[derive(Debug, Clone, Default)]
#[remember(store = "before")]
#[allow(dead_code)]
struct Before {
    unused: u8,
}

// Derive placed after the attribute, with other attributes around it.
#[remember(store = "after")]
#[allow(dead_code)]
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
struct After {
    unused: u8,
}

fn main() {
    // The derives still apply: Default, Clone, Debug, PartialEq all work.
    let before = Before::default().clone();
    assert_eq!(format!("{before:?}"), "Before { unused: 0 }");
    let after = After::default();
    assert_eq!(after.clone(), After { unused: 0 });
    assert_eq!(<Before as Remember>::SPEC, Some(RememberSpec::new().store("before")));
    assert_eq!(<After as Remember>::SPEC, Some(RememberSpec::new().store("after")));
}
