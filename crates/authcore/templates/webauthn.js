// authcore's WebAuthn ceremony for the built-in pages (the sign-in page's passkey form, as
// Auth.js's built-in page runs it with @simplewebauthn/browser; the two-factor page's
// passkey), served inline: no third-party script. For each form[data-webauthn-provider] it
// fetches <authURL>/webauthn-options/<id> (with the form's data-form-field inputs, and the
// form's data-webauthn-action when it fixes the ceremony), runs navigator.credentials
// .create() or .get(), and posts the form with the hidden `action` and `data` (the
// credential as JSON, binary fields base64url). With conditional UI on, the page also
// offers passkeys in the email field's autofill as soon as it loads.
(function () {
  "use strict";
  var script = document.currentScript;
  var authURL = script.dataset.authUrl;
  var conditional = script.dataset.conditional || "";
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  function fromB64u(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64u(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function creationOptions(o) {
    o.challenge = fromB64u(o.challenge);
    o.user.id = fromB64u(o.user.id);
    (o.excludeCredentials || []).forEach(function (c) { c.id = fromB64u(c.id); });
    return o;
  }
  function requestOptions(o) {
    o.challenge = fromB64u(o.challenge);
    (o.allowCredentials || []).forEach(function (c) { c.id = fromB64u(c.id); });
    return o;
  }
  function common(c) {
    return {
      id: c.id,
      rawId: toB64u(c.rawId),
      type: c.type,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
      authenticatorAttachment: c.authenticatorAttachment || undefined
    };
  }
  function registrationJSON(c) {
    var r = common(c);
    r.response = {
      clientDataJSON: toB64u(c.response.clientDataJSON),
      attestationObject: toB64u(c.response.attestationObject),
      transports: c.response.getTransports ? c.response.getTransports() : []
    };
    return r;
  }
  function authenticationJSON(c) {
    var r = common(c);
    r.response = {
      clientDataJSON: toB64u(c.response.clientDataJSON),
      authenticatorData: toB64u(c.response.authenticatorData),
      signature: toB64u(c.response.signature),
      userHandle: c.response.userHandle ? toB64u(c.response.userHandle) : undefined
    };
    return r;
  }

  function setup(form) {
    var id = form.dataset.webauthnProvider;
    var status = form.querySelector("[data-webauthn-status]");
    function say(text) { if (status) status.textContent = text; }

    function options(action) {
      var url = new URL(authURL + "/webauthn-options/" + encodeURIComponent(id));
      if (action) url.searchParams.set("action", action);
      form.querySelectorAll("input[data-form-field]").forEach(function (input) {
        if (input.value) url.searchParams.set(input.name, input.value);
      });
      return fetch(url, { credentials: "same-origin" }).then(function (res) {
        return res.ok ? res.json() : res.json().then(function (body) {
          // A sentence when the server has one (a passkey sign-up that needs the email
          // address proven first), else the error code.
          var why = body && (body.message || body.error);
          throw new Error(why || "HTTP " + res.status);
        });
      });
    }
    function post(action, data) {
      form.querySelector("input[name=action]").value = action;
      form.querySelector("input[name=data]").value = JSON.stringify(data);
      form.submit();
    }
    // One ceremony at a time: a pending autofill request is aborted when the button starts
    // another (browsers refuse a second request while one is pending).
    var pending = null;
    function run(action, mediation) {
      if (pending) pending.abort();
      var controller = new AbortController();
      pending = controller;
      return options(action).then(function (res) {
        if (res.action === "authenticate") {
          var req = { publicKey: requestOptions(res.options), signal: controller.signal };
          if (mediation) req.mediation = mediation;
          return navigator.credentials.get(req).then(function (c) {
            if (c) post("authenticate", authenticationJSON(c));
          });
        }
        if (res.action === "register") {
          return navigator.credentials
            .create({ publicKey: creationOptions(res.options), signal: controller.signal })
            .then(function (c) { if (c) post("register", registrationJSON(c)); });
        }
      });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      say("");
      run(form.dataset.webauthnAction, undefined).catch(function (e) {
        // Without an action the server decides, and it decides nothing for a signed-in
        // user (Auth.js's table): a signed-in user adds a passkey, so ask for that.
        if (e && e.message === "Invalid request" && !form.dataset.webauthnAction) {
          return run("register", undefined);
        }
        throw e;
      }).catch(function (e) {
        if (e && e.name === "AbortError") return;
        if (e && e.name === "NotAllowedError") return say("The passkey request was cancelled.");
        say("Passkey sign-in failed: " + (e && e.message ? e.message : e));
      });
    });

    if (id === conditional && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
        if (ok) return run("authenticate", "conditional");
      }).catch(function () { /* autofill is best effort */ });
    }
  }

  document.querySelectorAll("form[data-webauthn-provider]").forEach(setup);
})();
