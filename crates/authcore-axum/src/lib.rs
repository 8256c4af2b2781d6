//! authcore-axum
