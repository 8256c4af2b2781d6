//! `RequireAuth`'s permissions, roles and API keys, and the `CurrentPrincipal` extractor,
//! through the guard suite of `authcore-conformance`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{App, HttpResponse, Route, test, web};
use authcore::SessionStrategy;
use authcore_actix::{CurrentPrincipal, RequireAuth, Session, auth_routes};
use authcore_conformance::guards::{self, GuardAnswer, GuardRequest, GuardWorld, Handler, ROUTES};

/// The handler of a suite route.
fn handler(world: &Arc<GuardWorld>, handler: Handler) -> Route {
    let w = Arc::clone(world);
    match handler {
        Handler::Principal => web::get().to(move |CurrentPrincipal(p): CurrentPrincipal| {
            let w = Arc::clone(&w);
            async move { w.serve(&p.user_id) }
        }),
        Handler::PrincipalInOrganization => web::get().to(
            move |CurrentPrincipal(p): CurrentPrincipal, org: web::Path<String>| {
                let w = Arc::clone(&w);
                async move {
                    let (status, body) = w.serve_in(&p, &org);
                    HttpResponse::build(StatusCode::from_u16(status).unwrap()).body(body)
                }
            },
        ),
        Handler::Session => web::get().to(move |s: Session| {
            let w = Arc::clone(&w);
            async move { w.serve(s.user_id().unwrap_or_default()) }
        }),
    }
}

#[actix_web::test]
async fn guards() {
    for strategy in [SessionStrategy::Jwt, SessionStrategy::Database] {
        run(strategy).await;
    }
}

/// The suite's routes, each behind the guard it asks for, and the suite through them.
async fn run(strategy: SessionStrategy) {
    let world = Arc::new(GuardWorld::new(strategy).await);
    let auth = world.auth.clone();
    let mut app = App::new()
        .app_data(web::Data::new(auth.clone()))
        .service(auth_routes(auth.clone()));
    for route in ROUTES {
        let resource = web::resource(route.path).route(handler(&world, route.handler));
        let Some(json) = route.json else {
            app = app.service(resource);
            continue;
        };
        let mut guard = if json {
            RequireAuth::json(auth.clone())
        } else {
            RequireAuth::new(auth.clone())
        };
        if let Some(permission) = route.permission {
            guard = guard.permission(permission);
        }
        if let Some(role) = route.role {
            guard = guard.role(role);
        }
        app = app.service(resource.wrap(guard));
    }
    let app = test::init_service(app).await;
    let send = |request: GuardRequest| {
        let mut req = test::TestRequest::get().uri(&request.path);
        for (name, value) in request.headers {
            req = req.append_header((name, value));
        }
        let app = &app;
        async move {
            let res = test::call_service(app, req.to_request()).await;
            let status = res.status().as_u16();
            let headers = res
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
                .collect();
            let body = test::read_body(res).await;
            GuardAnswer {
                status,
                headers,
                body: String::from_utf8(body.to_vec()).unwrap(),
            }
        }
    };
    guards::run(&world, send).await;
}
