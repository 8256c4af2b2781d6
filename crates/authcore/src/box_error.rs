//! The boxed error type of user code, at the bottom of the module graph so that every
//! layer (adapters included) can name it without depending on the error layer above.

/// A boxed error from user code (callbacks, `authorize`, adapters).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;
