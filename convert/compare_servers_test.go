package convert_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// uuid is a random UUID, as JMeter's ${__UUID()} and perflab's ${uuid}
// make them: masked in every plan's requests.
var uuid = mask{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`), "<uuid>"}

// serve is a plan's server: a function of the request and its body that
// is called one request at a time.
func serve(f func(w http.ResponseWriter, r *http.Request, body string)) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		f(w, r, string(b))
	})
}

// reply writes a status and a JSON (or text) body.
func reply(w http.ResponseWriter, status int, body string, args ...any) {
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, body, args...)
}

// The plans compared, each with the server written for it.
var comparisons = []comparison{
	{
		name: "petclinic-rest", plan: "spring-petclinic__spring-petclinic-rest__petclinic-jmeter-crud-benchmark.jmx",
		server: petclinicREST,
	},
	{
		name: "telnoiko-tasks", plan: "telnoiko__perf-testing-talk-jmeter-gatling-k6__test_plan.jmx",
		server: telnoikoTasks,
		masks: []mask{
			// JMeter's 7 and 20 random characters are UTF-16 units: as
			// few as 4 and 10 letters, some beyond the BMP; perflab's are 7
			// and 20 letters and digits.
			{regexp.MustCompile(`(?s)"name": ".{4,7}",\r\n    "email"`), "\"name\": \"<random>\",\r\n    \"email\""},
			{regexp.MustCompile(`(?s)"description": ".{10,20}",\r\n    "completed"`), "\"description\": \"<random>\",\r\n    \"completed\""},
		},
	},
	{
		name: "onap-distribution", plan: "onap__policy-distribution__performance.jmx",
		server:    onapDistribution,
		unordered: "its two thread groups run at the same time",
	},
	{
		name: "bifrost-products", plan: "sealuzh__bifrost-microservices-sample-application__jmeter.jmx",
		server: bifrostProducts,
		random: "its Random Controller sends one of four searches, picked at random, in each iteration",
	},
	{
		name: "folio-renewals", plan: "folio-org__folio-perf-test__mod-circulationRenewalsTestPlan.jmx",
		data: map[string]string{"Folio-Test-Plans/config.csv": "compare/folio-config.csv"},
		// The due dates that JSR223 pre-processors compute: in 4 days.
		set: func() map[string]string {
			due := time.Now().Add(96 * time.Hour).Format("2006-01-02T03:04:05Z07:00")
			return map[string]string{"FutureDateNewLoan": due, "FutureDateRenewByBarcode": due, "FutureDateRenewById": due}
		},
		server: folioRenewals,
		masks:  []mask{date},
	},
	{
		name: "onap-clamp", plan: "onap__policy-clamp__performance.jmx",
		props: map[string]string{"INSTANCES": "2", "USERS": "1"},
		// The element's id that a BeanShell pre-processor makes.
		set: func() map[string]string {
			return map[string]string{"elementId": "8c6f1b6e-6d6e-4f55-9b3c-1f1d2a0c5e7a"}
		},
		server: onapClamp,
		masks:  []mask{{regexp.MustCompile(`"name": "[abcdefghilmnopqrtsvz]{10}"`), `"name": "<random 10>"`}},
		gap:    "the BeanShell Sampler in the While Controller of \"Verify No Instances\" sets loopCondition to false once the instances' list is [] (an if of a script) and is not converted: the loop, while loopCondition == \"true\" (the Loop Controller's BeanShell pre-processor, a set: step, sets it before each sampler), never ends where JMeter leaves it after one pass; then the BeanShell pre- and post-processors that keep a stack of each composition's and instance's id for the undeploy loop (which undoes them last first, from properties by thread number) are not converted: perflab undeploys the last composition twice",
		at:     "the converted plan did not end on its own",
	},
	{
		name: "marine-licensing", plan: "DEFRA__marine-licensing-perf-tests__exemption-manual-coordinate.jmx",
		// What the JSR223 scripts make: a user, the stub's login link
		// for that user, a project's name and its dates (in 60 and 180
		// days).
		set: func() map[string]string {
			start, end := time.Now().AddDate(0, 0, 60), time.Now().AddDate(0, 0, 180)
			return map[string]string{
				"userEmail": "perf-0123abcd@example.com", "userFirstName": "Perf", "userLastName": "Test 0123abcd",
				"stubLoginPath": "/cdp-defra-id-stub/authorize?user=perf-0123abcd@example.com",
				"runId":         "0123abcd", "projectName": "Perf Exemption 0123abcd",
				"startDay": start.Format("02"), "startMonth": start.Format("01"), "startYear": start.Format("2006"),
				"endDay": end.Format("02"), "endMonth": end.Format("01"), "endYear": end.Format("2006"),
			}
		},
		server: marineLicensing,
		masks: []mask{
			{regexp.MustCompile(`perf-[0-9a-f]{8}@example\.com`), "perf-<random>@example.com"},
			{regexp.MustCompile(`(Exemption|activity|Test)( |%20)[0-9a-f]{8}`), "$1$2<random>"},
			{regexp.MustCompile(`(date-(day|month|year))=\d+`), "$1=<today+n>"},
		},
	},
	{
		name: "folio-check-in-check-out", plan: "folio-org__perf-testing__circulation_checkInCheckOut_orchid.jmx",
		loops: 4, // one whole, one for each failure its server makes
		data: map[string]string{
			"jmeter-supported-data/credentials.csv":      "corpus/folio-org__perf-testing__credentials.csv",
			"jmeter-supported-data/checked_out.csv":      "corpus/folio-org__perf-testing__checked_out.csv",
			"jmeter-supported-data/service_point.csv":    "corpus/folio-org__perf-testing__service_point.csv",
			"jmeter-supported-data/user_barcodes.csv":    "compare/folio-user_barcodes.csv",
			"jmeter-supported-data/available.csv":        "compare/folio-available.csv",
			"scripts/BranchSelectorRandomizerScript.gvy": "compare/BranchSelectorRandomizerScript.gvy",
		},
		// The branch that the JSR223 samplers pick: check-in (the test's
		// script picks it every time).
		set:    func() map[string]string { return map[string]string{"goto_check_io": "checkin"} },
		server: folioCheckInCheckOut,
		masks:  []mask{date},
	},
}

// date is a date and time as JMeter's ${__time(yyyy-MM-dd'T'hh:mm:ssX)}
// writes it, masked where a plan sends the time of the run.
var date = mask{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d(:?\d\d)?)`), "<time>"}

// petclinicREST answers Spring PetClinic's REST API as the CRUD benchmark
// reads it: an owner and a pet created with their ids (the JSON
// extractors read $.id), then updated, read and deleted. On purpose, the
// second pet created comes back without an id (the extractor misses and
// leaves its default, an empty pet_id) and the third pet update fails
// with 500.
func petclinicREST() http.Handler {
	owners, petUpdates := 0, 0
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		path := strings.TrimPrefix(r.URL.Path, "/petclinic/api")
		switch {
		case r.Method == "POST" && path == "/owners":
			owners++
			reply(w, 201, `{"id":%d,"firstName":"John"}`, 10+owners)
		case r.Method == "POST" && strings.HasSuffix(path, "/pets"):
			if owners == 2 {
				reply(w, 201, `{"name":"Buddy"}`)
				return
			}
			reply(w, 201, `{"id":%d,"name":"Buddy"}`, 100+owners)
		case r.Method == "POST" && path == "/visits":
			reply(w, 201, `{"id":7}`)
		case r.Method == "PUT" && strings.HasPrefix(path, "/pets/"):
			if petUpdates++; petUpdates == 3 {
				w.WriteHeader(500)
				return
			}
			w.WriteHeader(204)
		case r.Method == "PUT" || r.Method == "DELETE":
			w.WriteHeader(204)
		case r.Method == "GET":
			reply(w, 200, `{"id":1,"name":"Buddy"}`)
		default:
			w.WriteHeader(404)
		}
	})
}

// telnoikoTasks answers the tasks API of the talk's demo as its plan reads
// it: a user created (the JSON extractor reads $.user.email), logged in
// ($.token, then sent as a bearer token, checked), tasks created ($.id),
// updated and deleted, all tokens revoked. On purpose, the seventh task
// update is a 404 and the second logout a 500.
func telnoikoTasks() http.Handler {
	users, tokens := map[string]bool{}, map[string]bool{}
	logins, tasks, updates, logouts := 0, 0, 0, 0
	email := regexp.MustCompile(`"email": "([^"]*)"`)
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		m := email.FindStringSubmatch(body)
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case r.Method == "POST" && r.URL.Path == "/users" && m != nil:
			users[m[1]] = true
			reply(w, 201, `{"user":{"email":%q}}`, m[1])
		case r.Method == "POST" && r.URL.Path == "/users/login":
			if m == nil || !users[m[1]] {
				reply(w, 401, `{"message":"no such user"}`)
				return
			}
			logins++
			t := fmt.Sprintf("token-%d", logins)
			tokens[t] = true
			reply(w, 200, `{"token":%q}`, t)
		case !tokens[token]:
			reply(w, 401, `{"message":"not logged in"}`)
		case r.Method == "POST" && r.URL.Path == "/tasks":
			tasks++
			reply(w, 201, `{"id":%d,"completed":false}`, tasks)
		case r.Method == "PUT" && strings.HasPrefix(r.URL.Path, "/tasks/"):
			if updates++; updates == 7 {
				reply(w, 404, `{"message":"no such task"}`)
				return
			}
			reply(w, 200, `{"id":%s,"completed":true}`, strings.TrimPrefix(r.URL.Path, "/tasks/"))
		case r.Method == "DELETE" && strings.HasPrefix(r.URL.Path, "/tasks/"):
			w.WriteHeader(204)
		case r.Method == "POST" && r.URL.Path == "/users/logoutAll":
			if logouts++; logouts == 2 {
				reply(w, 500, `{"message":"try again"}`)
				return
			}
			delete(tokens, token)
			w.WriteHeader(204)
		default:
			reply(w, 404, `{"message":"not found"}`)
		}
	})
}

// onapDistribution answers ONAP's policy administration (PAP) and
// distribution APIs as the distribution performance plan reads them,
// asking for the PAP's basic credentials: the policies deployed (a JSON
// array the extractor counts, asserted to be 10), the PDP groups' policies
// (10, then none once undeployed), the undeployment status (a list, then
// an empty one, [], which ends the plan's While loop: its regex extractor
// takes the body's first two non-word characters), and the distribution
// component's health check and metrics. On purpose, the second call for
// the policies deployed lists 9.
func onapDistribution() http.Handler {
	deployed, statuses, undeployed := 0, 0, false
	policies := func(n int) string {
		var p []string
		for i := 1; i <= n; i++ {
			p = append(p, fmt.Sprintf(`{"name":"onap.policies.p%d","version":"1.0.0"}`, i))
		}
		return "[" + strings.Join(p, ",") + "]"
	}
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		if user, pass, ok := r.BasicAuth(); strings.HasPrefix(r.URL.Path, "/policy/pap/") && (!ok || user != "policyadmin" || pass != "zb!XztG34") {
			reply(w, 401, `{"error":"unauthorized"}`)
			return
		}
		switch r.URL.Path {
		case "/policy/pap/v1/policies/deployed":
			deployed++
			statuses, undeployed = 0, false
			n := 10
			if deployed == 2 {
				n = 9
			}
			reply(w, 200, "%s", policies(n))
		case "/policy/pap/v1/pdps":
			n := 10
			if undeployed {
				n = 0
			}
			reply(w, 200, `{"groups":[{"name":"defaultGroup","pdpSubgroups":[{"pdpType":"apex","policies":%s}]}]}`, policies(n))
		case "/policy/pap/v1/policies/status":
			if statuses++; statuses == 1 {
				reply(w, 200, `[{"policy":{"name":"onap.policies.p1"},"deploy":false,"state":"WAITING"}]`)
				return
			}
			undeployed = true
			reply(w, 200, `[]`)
		case "/healthcheck":
			reply(w, 200, `{"name":"Policy SSD","healthy":true,"code":200}`)
		case "/metrics":
			reply(w, 200, "# TYPE jvm_memory_used_bytes gauge\njvm_memory_used_bytes{area=\"heap\"} 1.0\n")
		default:
			reply(w, 404, `{"error":"not found"}`)
		}
	})
}

// folioRenewals answers FOLIO's Okapi as mod-circulation's renewals plan
// reads it: a login that gives its token in the x-okapi-token header (the
// regex extractor reads the headers, and every later request must send it
// back), one active user, one available item and one service point (the
// JSON extractors pick among $.users[*].id ...), loans created, renewed,
// updated and deleted, and a deleted loan that is no longer found (404,
// which the plan asserts). On purpose, the second check that a deleted
// loan is gone finds it (200), and the second renewal by barcode is
// refused (422).
func folioRenewals() http.Handler {
	loans := map[string]bool{}
	n, verifies, renewals := 0, 0, 0
	loan := func(status int) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			n++
			id := fmt.Sprintf("loan-%d", n)
			loans[id] = true
			reply(w, status, `{"id":%q,"userId":"user-1","itemId":"item-1","item":{"id":"item-1","barcode":"ib-1"},"status":{"name":"Open"}}`, id)
		}
	}
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		id := strings.TrimPrefix(r.URL.Path, "/circulation/loans/")
		switch {
		case r.URL.Path == "/authn/login":
			if !strings.Contains(body, `"username": "diku_admin"`) {
				reply(w, 422, `{"errors":[{"message":"no such user"}]}`)
				return
			}
			w.Header()["x-okapi-token"] = []string{"token-1"} // Okapi's spelling
			reply(w, 201, `{"okapiToken":"token-1"}`)
		case r.Header.Get("X-Okapi-Token") != "token-1":
			reply(w, 401, "Invalid token")
		case r.Method == "GET" && r.URL.Path == "/users":
			reply(w, 200, `{"users":[{"id":"user-1","barcode":"ub-1","active":true}],"totalRecords":1}`)
		case r.Method == "GET" && r.URL.Path == "/inventory/items":
			reply(w, 200, `{"items":[{"id":"item-1","barcode":"ib-1","status":{"name":"Available"}}],"totalRecords":1}`)
		case r.Method == "GET" && r.URL.Path == "/service-points":
			reply(w, 200, `{"servicepoints":[{"id":"sp-1","name":"Circ Desk 1"}],"totalRecords":1}`)
		case r.Method == "GET" && r.URL.Path == "/circulation/loans":
			reply(w, 200, `{"loans":[],"totalRecords":0}`)
		case r.Method == "POST" && (r.URL.Path == "/circulation/loans" || r.URL.Path == "/circulation/check-out-by-barcode"):
			loan(201)(w)
		case r.Method == "POST" && r.URL.Path == "/circulation/renew-by-barcode":
			if renewals++; renewals == 2 {
				reply(w, 422, `{"errors":[{"message":"loan has reached its maximum number of renewals"}]}`)
				return
			}
			loan(200)(w)
		case r.Method == "POST" && r.URL.Path == "/circulation/renew-by-id":
			loan(200)(w)
		case r.Method == "PUT" && loans[id]:
			w.WriteHeader(204)
		case r.Method == "DELETE" && loans[id]:
			delete(loans, id)
			w.WriteHeader(204)
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/circulation/loans/"):
			if verifies++; verifies == 2 || loans[id] {
				reply(w, 200, `{"id":%q}`, id)
				return
			}
			reply(w, 404, "Not found")
		default:
			reply(w, 404, "Not found")
		}
	})
}

// onapClamp answers ONAP's automation composition runtime (CLAMP ACM) as
// its performance plan reads it, asking for the runtime's basic
// credentials: participants registered, composition definitions
// commissioned ($.compositionId), primed (a state that reads PRIMING, then
// PRIMED: the plan's While loop polls it), instances created
// ($.instanceId), deployed and undeployed (DEPLOYING then DEPLOYED ...),
// the compositions listed 10 to a page, the runtime's Prometheus metrics,
// and everything deleted. On purpose, the second listing of participants
// fails (500); the plan stops the test on a sampler's error.
func onapClamp() http.Handler {
	compositions, instances := map[string]string{}, map[string]string{}
	owner := map[string]string{} // instance → composition
	nc, ni, participants := 0, 0, 0
	next := map[string]string{"PRIMING": "PRIMED", "DEPRIMING": "COMMISSIONED", "DEPLOYING": "DEPLOYED", "UNDEPLOYING": "UNDEPLOYED"}
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "runtimeUser" || pass != "zb!XztG34" {
			reply(w, 401, `{"error":"unauthorized"}`)
			return
		}
		path := strings.TrimSpace(strings.TrimPrefix(r.URL.Path, "/onap/policy/clamp/acm"))
		parts := strings.Split(strings.Trim(path, "/"), "/") // v2 compositions ID instances ID
		comp, inst := "", ""
		if len(parts) > 2 && parts[1] == "compositions" {
			comp = parts[2]
		}
		if len(parts) > 4 {
			inst = parts[4]
		}
		switch {
		case path == "/v2/participants" && r.Method == "PUT":
			reply(w, 202, `{}`)
		case path == "/v2/participants":
			if participants++; participants == 2 {
				reply(w, 500, `{"errorDetails":"database unavailable"}`)
				return
			}
			reply(w, 200, `[{"participantId":"101c62b3-8918-41b9-a747-d21eb79c6c01","participantSupportedElementTypes":{}}]`)
		case path == "/v2/compositions" && r.Method == "POST":
			nc++
			id := fmt.Sprintf("comp-%d", nc)
			compositions[id] = "COMMISSIONED"
			reply(w, 201, `{"compositionId":%q,"affectedAutomationCompositionDefinitions":[]}`, id)
		case path == "/v2/compositions":
			var list []string
			if r.URL.Query().Get("page") == "0" {
				for i := 1; i <= 10; i++ {
					list = append(list, fmt.Sprintf(`{"metadata":{"compositionId":"comp-%d"}}`, i))
				}
			}
			reply(w, 200, `{"service_templates":[%s]}`, strings.Join(list, ","))
		case path == "/actuator/prometheus":
			var metrics strings.Builder
			for _, m := range []string{"http_server_requests_seconds_sum", "http_server_requests_seconds_max", "http_server_requests_seconds_count",
				"spring_data_repository_invocations_seconds_count", "spring_data_repository_invocations_seconds_sum", "spring_data_repository_invocations_seconds_max",
				"jvm_threads_live_threads", "publisher_participant_update_seconds_count", "publisher_automation_composition_deploy_seconds_count",
				"listener_participant_prime_ack_seconds_count", "listener_automation_composition_statechange_ack_seconds_count", "listener_participant_status_seconds_count"} {
				fmt.Fprintf(&metrics, "%s 1.0\n", m)
			}
			reply(w, 200, "%s", metrics.String())
		case compositions[comp] == "":
			reply(w, 404, `{"errorDetails":"no such composition"}`)
		case inst == "" && len(parts) == 4 && r.Method == "POST":
			ni++
			id := fmt.Sprintf("instance-%d", ni)
			instances[id], owner[id] = "UNDEPLOYED", comp
			reply(w, 201, `{"instanceId":%q,"affectedAutomationCompositionElements":{}}`, id)
		case inst == "" && len(parts) == 4:
			var list []string
			for id, c := range owner {
				if c == comp {
					list = append(list, fmt.Sprintf(`{"instanceId":%q}`, id))
				}
			}
			reply(w, 200, `{"automationCompositionList":[%s]}`, strings.Join(list, ","))
		case inst == "" && r.Method == "PUT":
			compositions[comp] = map[bool]string{true: "DEPRIMING", false: "PRIMING"}[strings.Contains(body, "DEPRIME")]
			reply(w, 202, `{}`)
		case inst == "" && r.Method == "GET":
			state := compositions[comp]
			if to, ok := next[state]; ok {
				compositions[comp] = to
			}
			reply(w, 200, `{"compositionId":%q,"state":%q}`, comp, state)
		case inst == "" && r.Method == "DELETE":
			delete(compositions, comp)
			reply(w, 200, `{}`)
		case instances[inst] == "":
			reply(w, 404, `{"errorDetails":"no such instance"}`)
		case r.Method == "PUT":
			instances[inst] = map[bool]string{true: "UNDEPLOYING", false: "DEPLOYING"}[strings.Contains(body, "UNDEPLOY")]
			reply(w, 202, `{}`)
		case r.Method == "GET":
			state := instances[inst]
			if to, ok := next[state]; ok {
				instances[inst] = to
			}
			reply(w, 200, `{"instanceId":%q,"deployState":%q}`, inst, state)
		case r.Method == "DELETE":
			delete(instances, inst)
			delete(owner, inst)
			reply(w, 202, `{}`)
		default:
			reply(w, 404, `{"errorDetails":"not found"}`)
		}
	})
}

// marineLicensing answers DEFRA's marine licensing frontend and its
// identity stub as the exemption plan reads them: a user registered at
// the stub ($.userId), the stub's page of login links (the plan's regex
// takes them all and a script picks the one for its user), a login link
// that sets the session cookie and redirects to the frontend, and the
// exemption's pages, each a form with the session's CSRF token (the
// plan's regex takes it and sends it back, checked, as is the session
// cookie; a POST without the session redirects to the start), up to the
// declaration, whose page gives the application's reference
// (EXE/2026/NNNNN, asserted). On purpose, the second declaration's page
// has no reference.
func marineLicensing() http.Handler {
	var users []string
	declarations := 0
	page := func(w http.ResponseWriter, token, extra string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><body><form method="post"><input type="hidden" name="csrfToken" value="%s">%s</form></body></html>`, token, extra)
	}
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		form, _ := url.ParseQuery(body)
		session, _ := r.Cookie("session")
		switch {
		case r.URL.Path == "/cdp-defra-id-stub/API/register":
			users = append(users, regexp.MustCompile(`"email":"([^"]*)"`).FindStringSubmatch(body + `"email":""`)[1])
			reply(w, 201, `{"userId":"user-%d"}`, len(users))
		case r.URL.Path == "/cdp-defra-id-stub/authorize":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: fmt.Sprintf("s%d", len(users)), Path: "/"})
			http.Redirect(w, r, "/confirm-individual", http.StatusFound)
		case session == nil && r.URL.Path == "/exemption":
			var links []string
			for _, u := range users {
				links = append(links, fmt.Sprintf(`<a href="/cdp-defra-id-stub/authorize?user=%s">%s</a>`, u, u))
			}
			page(w, "csrf-anonymous", strings.Join(links, "\n"))
		case session == nil:
			http.Redirect(w, r, "/exemption", http.StatusFound)
		case r.Method == "POST" && form.Get("csrfToken") != "csrf-"+session.Value:
			reply(w, 403, "Invalid CSRF token")
		case r.URL.Path == "/declaration" && r.Method == "POST":
			if declarations++; declarations == 2 {
				page(w, "csrf-"+session.Value, "<p>Application submitted</p>")
				return
			}
			page(w, "csrf-"+session.Value, fmt.Sprintf("<p>Your reference: EXE/2026/%05d</p>", 10000+declarations))
		default:
			page(w, "csrf-"+session.Value, "")
		}
	})
}

// folioCheckInCheckOut answers FOLIO's Okapi as the check-in/check-out
// workflow reads it: a login that gives its token in the x-okapi-token
// header (read by the login fragment's regex, sent back and checked), the
// settings, users, groups, service points, items and loans each page of
// the workflow asks for, with the fields its JSON assertions ask for
// ($.totalRecords, $..username ...) and its JSON extractors read
// ($.items[0].id, $.loan.id, $.userId ...), and check-ins and check-outs
// (a check-out's JSON laid out as FOLIO's, "id" : ..., which a response
// assertion looks for). Each iteration checks in twice in its loop, logs
// in again and goes through check-in and check-out once more; the first
// runs whole, and on purpose each of the others ends at a failure (start
// next thread loop): the eighth CHECKOUT settings entry has a totalRecords
// of -1 (a JSON assertion's regex rejects it), the third list of a
// patron's loans has no totalRecords (a JSON assertion asks for it), and
// the second check-out is refused (422, with errors, which an inverted
// JSON assertion rejects).
func folioCheckInCheckOut() http.Handler {
	settings, loanLists, checkouts, items := 0, 0, 0, 0
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		p := r.URL.Path
		switch {
		case p == "/authn/login" && r.Method == "POST":
			if !strings.Contains(body, `"username":"[user]"`) {
				reply(w, 422, `{"errors":[{"message":"Error verifying user existence"}]}`)
				return
			}
			w.Header()["x-okapi-token"] = []string{"token-1"} // Okapi's spelling
			reply(w, 201, `{"user":{"id":"user-1","username":"[user]"}}`)
		case r.Method == "OPTIONS" && p == "/circulation/check-out-by-barcode":
			reply(w, 200, `{"loanPolicyId":"lp-1"}`)
		case r.Method == "OPTIONS":
			w.WriteHeader(204)
		case r.Header.Get("X-Okapi-Token") != "token-1":
			reply(w, 401, "Invalid token")
		case p == "/configurations/entries":
			total := 0
			if strings.Contains(r.URL.RawQuery, "CHECKOUT") {
				if settings++; settings == 8 {
					total = -1
				}
			}
			reply(w, 200, `{"configs":[],"totalRecords":%d}`, total)
		case p == "/groups":
			reply(w, 200, `{"usergroups":[{"group":"staff","id":"group-1"}],"totalRecords":1}`)
		case p == "/users":
			reply(w, 200, `{"users":[{"id":"user-1","username":"patron","barcode":"ub-1001","patronGroup":"group-1"}],"totalRecords":1}`)
		case p == "/staff-slips-storage/staff-slips":
			reply(w, 200, `{"staffSlips":[{"id":"slip-1","name":"Hold"}],"totalRecords":1}`)
		case p == "/service-points":
			reply(w, 200, `{"servicepoints":[{"id":"sp-1","name":"Circ Desk 1"}],"totalRecords":1}`)
		case p == "/inventory/items":
			items++
			reply(w, 200, `{"items":[{"id":"item-%d","barcode":"ib"}],"totalRecords":1}`, items)
		case p == "/circulation/check-in-by-barcode":
			reply(w, 200, `{"item":{"id":"item-1"},"loan":{"id":"loan-1","userId":"user-1","lostItemPolicyId":"lip-1"}}`)
		case p == "/circulation/check-out-by-barcode":
			if checkouts++; checkouts == 2 {
				reply(w, 422, `{"errors":[{"message":"Item is already checked out"}]}`)
				return
			}
			reply(w, 201, "{\n  \"id\" : \"loan-%d\",\n  \"userId\" : \"user-1\",\n  \"itemId\" : \"item-1\"\n}", checkouts)
		case p == "/circulation/loans":
			if loanLists++; loanLists == 3 {
				reply(w, 200, `{"loans":[]}`)
				return
			}
			reply(w, 200, `{"loans":[],"totalRecords":0}`)
		case strings.HasPrefix(p, "/automated-patron-blocks/"):
			reply(w, 200, `{"automatedPatronBlocks":[]}`)
		case p == "/circulation/requests" || p == "/accounts" || p == "/lost-item-fees-policies" || p == "/proxiesfor" ||
			p == "/manualblocks" || strings.HasPrefix(p, "/note-links/"):
			reply(w, 200, `{"records":[],"totalRecords":0}`)
		default:
			reply(w, 404, "Not found")
		}
	})
}

// bifrostProducts answers the Bifrost sample application's auth and
// products services as its plan reads them: a login by query parameters
// whose JSON gives the user's email and a JSON web token (regex
// extractors), then sent as a bearer token (checked), the products
// (_id":"..., a regex extractor), a product, its purchase and searches.
// On purpose, the second purchase is refused (409: out of stock).
func bifrostProducts() http.Handler {
	buys := 0
	return serve(func(w http.ResponseWriter, r *http.Request, body string) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/customers/login":
			if q.Get("email") != "demouser@demo.ch" || q.Get("password") != "test" {
				reply(w, 401, `{"message":"wrong email or password"}`)
				return
			}
			reply(w, 200, `{"email":"demouser@demo.ch","jsonwebtoken":"jwt-1"}`)
		case r.Header.Get("Authorization") != "Bearer jwt-1":
			reply(w, 401, `{"message":"no token"}`)
		case r.URL.Path == "/products/":
			reply(w, 200, `[{"_id":"p-7","name":"Bifrost mug","price":12}]`)
		case r.URL.Path == "/products/p-7":
			reply(w, 200, `{"_id":"p-7","name":"Bifrost mug","price":12}`)
		case r.URL.Path == "/products/p-7/buy":
			if buys++; buys == 2 {
				reply(w, 409, `{"message":"out of stock"}`)
				return
			}
			reply(w, 200, `{"_id":"p-7","bought":true}`)
		case r.URL.Path == "/products/search" && q.Get("query") != "":
			reply(w, 200, `[]`)
		default:
			reply(w, 404, `{"message":"not found"}`)
		}
	})
}
