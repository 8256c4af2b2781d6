//! `RequireAuthLayer`'s permissions, roles and API keys, and the `CurrentPrincipal`
//! extractor, through the guard suite of `authcore-conformance`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use authcore::SessionStrategy;
use authcore_axum::{AuthRouterExt, CurrentPrincipal, RequireAuthLayer, Session};
use authcore_conformance::guards::{
    self, GuardAnswer, GuardRequest, GuardWorld, Handler, ORIGIN, ROUTES,
};
use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::routing::{MethodRouter, get};
use http::{Request, StatusCode};
use tower::ServiceExt;

/// The suite's routes, each behind the layer it asks for.
fn app(world: &Arc<GuardWorld>) -> Router {
    let auth = world.auth.clone();
    let mut app = Router::new();
    for route in ROUTES {
        let w = Arc::clone(world);
        let handler: MethodRouter<authcore::Auth> = match route.handler {
            Handler::Principal => {
                get(move |CurrentPrincipal(p): CurrentPrincipal| async move { w.serve(&p.user_id) })
            }
            Handler::PrincipalInOrganization => get(
                move |CurrentPrincipal(p): CurrentPrincipal, Path(org): Path<String>| async move {
                    let (status, body) = w.serve_in(&p, &org);
                    (StatusCode::from_u16(status).unwrap(), body)
                },
            ),
            Handler::Session => {
                get(move |s: Session| async move { w.serve(s.user_id().unwrap_or_default()) })
            }
        };
        let mut routes = Router::new().route(route.path, handler);
        if let Some(json) = route.json {
            let mut layer = if json {
                RequireAuthLayer::json(auth.clone())
            } else {
                RequireAuthLayer::new(auth.clone())
            };
            if let Some(permission) = route.permission {
                layer = layer.permission(permission);
            }
            if let Some(role) = route.role {
                layer = layer.role(role);
            }
            routes = routes.route_layer(layer);
        }
        app = app.merge(routes);
    }
    app.auth_routes(auth.clone()).with_state(auth)
}

async fn send(app: &Router, request: GuardRequest) -> GuardAnswer {
    let mut builder = Request::get(format!("{ORIGIN}{}", request.path));
    for (name, value) in &request.headers {
        builder = builder.header(*name, value);
    }
    let res = app
        .clone()
        .oneshot(builder.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status().as_u16();
    let headers = res
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    let body = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    GuardAnswer {
        status,
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}

#[tokio::test]
async fn guards() {
    for strategy in [SessionStrategy::Jwt, SessionStrategy::Database] {
        let world = Arc::new(GuardWorld::new(strategy).await);
        let app = app(&world);
        guards::run(&world, |request| send(&app, request)).await;
    }
}
