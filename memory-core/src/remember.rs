//! `Remember`: what `#[remember]` attaches to an agent type.

/// How an agent uses long-term memory; built by `#[remember(...)]`.
///
/// Every setting has a default, so the spec can be built in `const` context:
///
/// ```
/// use agentmemory_core::RememberSpec;
///
/// const SPEC: RememberSpec = RememberSpec::new().store("user_memory").top_k(3);
/// assert_eq!(SPEC.store, Some("user_memory"));
/// assert!(SPEC.extract && SPEC.inject);
/// assert_eq!(SPEC.top_k, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RememberSpec {
    /// DI token of the `UserMemoryStore`; `None` resolves the only registered one.
    pub store: Option<&'static str>,
    /// Extract facts from each turn.
    pub extract: bool,
    /// Inject relevant facts into the system prompt before each model call.
    pub inject: bool,
    /// How many facts to inject at most.
    pub top_k: usize,
    /// How many earlier messages (episodes) to recall at most; `0` turns recall off.
    pub recall: usize,
    /// Name of a chat model registered in the container, used for fact extraction.
    ///
    /// With `Some(name)` the session fails to build unless a chat model is registered
    /// under `name`; facts are then extracted by the `FactExtractor` registered under the
    /// same token if there is one, else by an `LlmExtractor` over that model.
    /// With `None`, the container's default `FactExtractor` is used when one is
    /// registered; otherwise the agent's own model extracts (an `LlmExtractor` over it)
    /// when it is a language model, and the offline `RuleExtractor` when the agent runs
    /// on the `OfflineModel` (see `ChatModel::is_language_model`) or no model is
    /// registered for it.
    pub extraction_model: Option<&'static str>,
}

impl RememberSpec {
    /// The defaults: auto-resolved store, extract and inject on, `top_k = 5`, `recall = 5`.
    pub const fn new() -> Self {
        Self {
            store: None,
            extract: true,
            inject: true,
            top_k: 5,
            recall: 5,
            extraction_model: None,
        }
    }

    /// Sets the store token.
    pub const fn store(mut self, token: &'static str) -> Self {
        self.store = Some(token);
        self
    }

    /// Turns extraction on or off.
    pub const fn extract(mut self, on: bool) -> Self {
        self.extract = on;
        self
    }

    /// Turns injection on or off.
    pub const fn inject(mut self, on: bool) -> Self {
        self.inject = on;
        self
    }

    /// Sets how many facts are injected.
    pub const fn top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }

    /// Sets how many episodes are recalled (`0`: none).
    pub const fn recall(mut self, n: usize) -> Self {
        self.recall = n;
        self
    }

    /// Sets the extraction model's name.
    pub const fn extraction_model(mut self, name: &'static str) -> Self {
        self.extraction_model = Some(name);
        self
    }
}

impl Default for RememberSpec {
    fn default() -> Self {
        Self::new()
    }
}

/// Implemented by `#[remember]` on an agent type: the agent's long-term memory settings.
///
/// An agent with no long-term memory implements it with an empty body (`SPEC` = `None`):
///
/// ```
/// use agentmemory_core::Remember;
/// struct Echo;
/// impl Remember for Echo {}
/// assert!(Echo::SPEC.is_none());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say how it uses long-term memory",
    label = "`{Self}` is used as an agent here",
    note = "put `#[remember]` on the struct for user memory, or write `impl agentmemory::Remember for {Self} {{}}` for none"
)]
pub trait Remember {
    /// The settings; `None` means the agent has no long-term memory.
    const SPEC: Option<RememberSpec> = None;
}
