import Foundation
import Testing
import TestFixtures

/// The files in deploy/ that other programs read, checked by those programs or by their schemas:
/// the Kubernetes manifests by kubernetes-validate (the API's JSON schemas, unknown fields refused),
/// the pod's facerelay.yml and nginx.conf by facerelay serve and nginx themselves, the systemd unit
/// by systemd-analyze, the Prometheus configuration and the dashboard's queries by promtool.
/// deploy/install-deps.sh installs every checker; a missing one fails the test with what to install.
@Suite(.serialized) struct DeploymentFilesTests {
    static let deploy = Package.root.appendingPathComponent("deploy").path

    /// The metrics FaceRelay exports at /metrics; the dashboard may use no other `facerelay_` name.
    static let metricNames: Set<String> = [
        "facerelay_info",
        "facerelay_stream_frames_total",
        "facerelay_stream_cpu_seconds_total",
        "facerelay_stream_memory_bytes",
        "facerelay_stream_faces",
        "facerelay_stream_sticker_info",
        "facerelay_stream_sticker_overhead_ratio",
        "facerelay_stream_upstream_up",
        "facerelay_stream_upstream_reconnects_total",
        "facerelay_stream_output_bytes_total",
        "facerelay_stream_output_frames_missed_total",
        "facerelay_stream_output_reconnects_total",
        "facerelay_stream_output_up",
        "facerelay_streams",
        "facerelay_events_total",
        "facerelay_subscribers",
        "facerelay_subscriber_events_dropped_total",
        "facerelay_process_cpu_seconds_total",
        "facerelay_process_resident_memory_bytes",
        "facerelay_shared_memory_bytes",
    ]

    /// Where deploy/install-deps.sh puts promtool and kubernetes-validate's virtual environment.
    static var tools: String {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.cache")
        return cache + "/facerelay/deploy-tools"
    }

    struct Checker {
        let executable: String
        /// What installs it, for the failure message.
        let installedBy: String

        static let kubernetesValidate = Checker(executable: tools + "/venv/bin/kubernetes-validate",
                                                installedBy: "deploy/install-deps.sh (kubernetes-validate from PyPI, in a virtual environment there)")
        static let python = Checker(executable: tools + "/venv/bin/python",
                                    installedBy: "deploy/install-deps.sh (the virtual environment of kubernetes-validate, with PyYAML)")
        static let promtool = Checker(executable: tools + "/promtool", installedBy: "deploy/install-deps.sh (promtool from Debian's prometheus package)")
        static let systemdAnalyze = Checker(executable: "/usr/bin/systemd-analyze", installedBy: "deploy/install-deps.sh (Debian's systemd package)")
        static let nginx = Checker(executable: "/usr/sbin/nginx", installedBy: "deploy/install-deps.sh (Debian's nginx and libnginx-mod-rtmp)")
    }

    struct Outcome {
        let status: Int32?
        let output: String
        var succeeded: Bool { status == 0 }
    }

    /// Runs a checker to completion; its stdout and stderr together. Throws when it is not installed.
    @discardableResult
    func run(_ checker: Checker, _ arguments: [String], seconds: Double = 120) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: checker.executable) else {
            throw FixtureError(description: "\(checker.executable) is not installed: run \(checker.installedBy)")
        }
        let directory = try Package.temporaryDirectory("check")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ChildProcess(checker.executable, arguments, logDirectory: directory, name: "checker")
        let status = child.wait(seconds: seconds)
        return Outcome(status: status, output: (child.stdout + child.stderr).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func file(_ path: String) -> String { Self.deploy + "/" + path }

    // MARK: Kubernetes

    @Test func kubernetesManifestsMatchTheAPISchemas() throws {
        // The manifests, and the example Secret kept apart from them.
        let manifests = try ["kubernetes", "kubernetes/example"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: file(folder)).filter { $0.hasSuffix(".yaml") }.sorted().map { file(folder + "/" + $0) }
        }
        #expect(manifests.count >= 5, "deploy/kubernetes holds \(manifests)")
        // The oldest Kubernetes the manifests are meant for, and the newest the schemas know.
        for version in ["1.29.0", "1.37.0"] {
            let outcome = try run(.kubernetesValidate, ["--strict", "--kubernetes-version", version] + manifests)
            #expect(outcome.succeeded, "kubernetes-validate --strict against Kubernetes \(version):\n\(outcome.output)")
        }
    }

    /// The text of the pod's files: the ConfigMap's facerelay.yml and nginx.conf, the Secret's routes.yml.
    func podFiles() throws -> [String: String] {
        let script = """
        import json, sys, yaml
        files = {}
        for path in sys.argv[1:]:
            with open(path) as stream:
                for document in yaml.safe_load_all(stream):
                    if document and document.get("kind") in ("ConfigMap", "Secret"):
                        files.update(document.get("data") or {})
                        files.update(document.get("stringData") or {})
        print(json.dumps(files))
        """
        let outcome = try run(.python, ["-c", script, file("kubernetes/configmap.yaml"), file("kubernetes/example/secret.yaml")])
        guard outcome.succeeded, let files = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: String] else {
            throw FixtureError(description: "cannot read the ConfigMap and the Secret: \(outcome.output)")
        }
        return files
    }

    /// The pod's facerelay.yml (the ConfigMap's, then the Secret's routes, as the container joins them)
    /// starts a real facerelay serve, which refuses any unknown key, bad value or missing sticker.
    @Test func podConfigurationStartsFaceRelay() throws {
        let files = try podFiles()
        let base = try #require(files["facerelay.yml"], "configmap.yaml has no facerelay.yml")
        let routes = try #require(files["routes.yml"], "example/secret.yaml has no routes.yml")
        let directory = try Package.temporaryDirectory("pod-config")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The pod's SRT port may be taken on a test machine: the listener moves to a free one.
        let config = directory + "/facerelay.yml"
        try (base + routes).replacingOccurrences(of: "srt://:9000", with: "srt://:\(freePort(udp: true))")
            .write(toFile: config, atomically: true, encoding: .utf8)
        // Paths of the image's file system replaced by the checkout's; everything else as in the pod.
        let socket = directory + "/control.sock"
        let httpPort = freePort()
        let serve = try ChildProcess(Package.facerelay, ["serve", "--config", config, "--control-socket", socket,
                                                         "--http", "127.0.0.1:\(httpPort)",
                                                         "--stickers", Package.root.appendingPathComponent("Stickers").path,
                                                         "--pipelines", Package.root.appendingPathComponent("Pipelines").path],
                                     logDirectory: directory, name: "serve")
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline, serve.process.isRunning,
              !(NginxRTMP.accepts(port: httpPort) && FileManager.default.fileExists(atPath: socket)) {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let started = serve.process.isRunning && NginxRTMP.accepts(port: httpPort)
        #expect(started, "facerelay serve refused the pod's configuration:\n\(serve.stderr.suffix(3000))")
        serve.signal(SIGTERM)
        let status = serve.wait(seconds: 30)
        if started { #expect(status == 0, "serve exited \(status.map(String.init) ?? "by time-out") after SIGTERM:\n\(serve.stderr.suffix(2000))") }
    }

    @Test func podNginxConfigurationIsAcceptedByNginx() throws {
        let files = try podFiles()
        let text = try #require(files["nginx.conf"], "configmap.yaml has no nginx.conf")
        let directory = try Package.temporaryDirectory("pod-nginx")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // nginx -t creates the pid file: the test's goes to its own folder.
        let pid = try NSRegularExpression(pattern: "(?m)^pid [^;]*;")
        let tested = pid.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "pid \(directory)/nginx.pid;")
        try tested.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let outcome = try run(.nginx, ["-t", "-p", directory, "-c", directory + "/nginx.conf", "-e", "stderr"])
        #expect(outcome.succeeded, "nginx -t:\n\(outcome.output)")
        // The hooks go to FaceRelay's port in the same pod.
        #expect(text.contains("on_publish http://127.0.0.1:8190/rtmp/on_publish;"), "nginx.conf does not notify FaceRelay on 127.0.0.1:8190")
    }

    // MARK: systemd

    /// systemd-analyze verify reports unknown keys and bad values only as messages, with status 0:
    /// any message fails. The binary's path is the built one, which verify wants to exist.
    @Test func systemdUnitVerifiesAndStaysHardened() throws {
        let directory = try Package.temporaryDirectory("unit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let unit = directory + "/facerelay.service"
        try String(contentsOfFile: file("facerelay.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/facerelay", with: Package.facerelay)
            .write(toFile: unit, atomically: true, encoding: .utf8)
        let verify = try run(.systemdAnalyze, ["verify", unit])
        #expect(verify.succeeded && verify.output.isEmpty, "systemd-analyze verify deploy/facerelay.service:\n\(verify.output)")
        // The exposure score (0 to 100; 14 when written) stays low: a hardening option dropped fails.
        let security = try run(.systemdAnalyze, ["security", "--offline=yes", "--threshold=25", "--no-pager", unit])
        #expect(security.succeeded, "systemd-analyze security: exposure above 2.5:\n\(security.output)")
    }

    // MARK: Prometheus and Grafana

    /// promtool checks the whole file; Debian's Prometheus is built without Kubernetes discovery, so
    /// each kubernetes_sd_configs block is checked here (known keys, a valid role) and replaced by a
    /// static target before promtool sees it: its relabelling is still checked by promtool.
    @Test func prometheusConfigurationIsValid() throws {
        let script = """
        import sys, yaml
        config = yaml.safe_load(open(sys.argv[1]))
        known = {"role", "namespaces", "selectors", "api_server", "kubeconfig_file", "attach_metadata", "basic_auth",
                 "authorization", "oauth2", "tls_config", "proxy_url", "follow_redirects", "enable_http2"}
        roles = {"pod", "node", "service", "endpoints", "endpointslice", "ingress"}
        for job in config.get("scrape_configs") or []:
            blocks = job.pop("kubernetes_sd_configs", None)
            if blocks is None:
                continue
            for block in blocks:
                unknown = set(block) - known
                if unknown:
                    sys.exit("%s: kubernetes_sd_configs: unknown keys %s" % (job.get("job_name"), sorted(unknown)))
                if block.get("role") not in roles:
                    sys.exit("%s: kubernetes_sd_configs: role %r is not one of %s" % (job.get("job_name"), block.get("role"), sorted(roles)))
            job.setdefault("static_configs", []).append({"targets": ["pod.invalid:8190"]})
        yaml.safe_dump(config, open(sys.argv[2], "w"))
        """
        let directory = try Package.temporaryDirectory("prometheus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let checked = directory + "/prometheus.yml"
        let discovery = try run(.python, ["-c", script, file("prometheus.yml"), checked])
        #expect(discovery.succeeded, "deploy/prometheus.yml: \(discovery.output)")
        guard discovery.succeeded else { return }
        let outcome = try run(.promtool, ["check", "config", "--syntax-only", checked])
        #expect(outcome.succeeded, "promtool check config deploy/prometheus.yml:\n\(outcome.output)")
    }

    /// Every query string of the dashboard: the panels' expressions, and the variables' queries apart.
    func dashboardQueries() throws -> (expressions: [String], variables: [String]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: file("grafana-facerelay.json")))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "the dashboard is not a JSON object")
        var expressions: [String] = []
        func collect(_ panels: [[String: Any]]) {
            for panel in panels {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    if let expr = target["expr"] as? String { expressions.append(expr) }
                }
                collect(panel["panels"] as? [[String: Any]] ?? [])
            }
        }
        collect(dashboard["panels"] as? [[String: Any]] ?? [])
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { variable -> String? in
            guard variable["type"] as? String == "query" else { return nil }
            return (variable["query"] as? [String: Any])?["query"] as? String ?? variable["query"] as? String
        }
        return (expressions, variables)
    }

    @Test func dashboardUsesOnlyExportedMetrics() throws {
        let (expressions, variables) = try dashboardQueries()
        #expect(expressions.count >= 10, "the dashboard has \(expressions.count) queries")
        let name = try NSRegularExpression(pattern: "facerelay_[a-z0-9_]*[a-z0-9]")
        var unknown: Set<String> = []
        for query in expressions + variables {
            for match in name.matches(in: query, range: NSRange(query.startIndex..., in: query)) {
                let metric = String(query[Range(match.range, in: query)!])
                if !Self.metricNames.contains(metric) { unknown.insert(metric) }
            }
        }
        #expect(unknown.isEmpty, "the dashboard queries metrics FaceRelay does not export: \(unknown.sorted())")
        for fixed in ["facerelay_stream_frames_total", "facerelay_stream_cpu_seconds_total"] {
            #expect(expressions.contains { $0.contains(fixed) }, "the dashboard does not chart \(fixed)")
        }
    }

    /// promtool parses each panel's expression as a recording rule, with Grafana's variables filled in.
    @Test func dashboardQueriesAreValidPromQL() throws {
        let (expressions, _) = try dashboardQueries()
        let variable = try NSRegularExpression(pattern: #"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"#)
        let rules = expressions.enumerated().map { index, expression -> [String: String] in
            var filled = expression
            for interval in ["$__rate_interval", "$__interval", "$__range"] { filled = filled.replacingOccurrences(of: interval, with: "5m") }
            filled = variable.stringByReplacingMatches(in: filled, range: NSRange(filled.startIndex..., in: filled), withTemplate: ".*")
            return ["record": "dashboard_query_\(index + 1)", "expr": filled]
        }
        let directory = try Package.temporaryDirectory("dashboard")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // JSON is YAML (with "/" left unescaped): the rule file needs no quoting of its own.
        let path = directory + "/dashboard-rules.yml"
        try JSONSerialization.data(withJSONObject: ["groups": [["name": "dashboard", "rules": rules]]], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            .write(to: URL(fileURLWithPath: path))
        let outcome = try run(.promtool, ["check", "rules", path])
        #expect(outcome.succeeded, "promtool check rules (the dashboard's expressions, in order):\n\(outcome.output)\n\(rules.map { $0["expr"]! }.joined(separator: "\n"))")
    }
}
