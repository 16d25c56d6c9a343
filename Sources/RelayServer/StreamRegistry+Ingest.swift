import Logging
import Synchronization

/// nginx-rtmp's notifications (a publish lets its broadcaster through once the relay plays the
/// key) and the SRT listeners: how streams start without a control request.
extension StreamRegistry {
    /// nginx-rtmp's `on_publish`: starts the stream of a routed key and waits (bounded) until its
    /// relay is listening, so that the broadcaster's first keyframe reaches it. Nil: refused.
    public func publishStarted(application: String, key: String) async -> String? {
        guard let route = config.route(application: application, key: key) else {
            logger.warning("publish refused: no route for this key", metadata: ["application": "\(application)"])
            return nil
        }
        let origin = StreamOrigin.rtmpPublish(application: application, key: key)
        let played = "\(application)/\(key)"
        if let awaiting = state.withLock({ state in state.streams.values.first { $0.origin == origin && !$0.isFinished } }) {
            // A broadcaster back within the grace period: its stream is still open and listens
            // again; like a first publish, it is let through once that play has begun.
            logger.info("publisher back; continuing its stream", metadata: ["stream": "\(awaiting.id)", "application": "\(application)"])
            await waitForPlay(played)
            return awaiting.id
        }
        let input = "\(config.rtmpIngest)/\(application)/\(key)"
        let started = await offload { [self] in
            Result { () throws(ControlError) in
                try start(input: input, outputs: route.outputs, sticker: route.sticker, stream: nil,
                          origin: origin)
            }
        }
        let id: String
        switch started {
        case .success(let started):
            id = started
        case .failure(let error):
            logger.error("publish refused: the stream cannot start: \(error.message)", metadata: ["application": "\(application)"])
            return nil
        }
        await waitForPlay(played)
        return id
    }

    /// Waits until a relay plays this key, so that nginx-rtmp gives it the publish from its first
    /// frame (a player that joins later starts at the next keyframe, seconds in). Bounded below
    /// nginx-rtmp's `netcall_timeout` (10 s), past which nginx would drop the publish: a stream
    /// that starts slowly (a busy machine starting several at once takes more than 3 s) still
    /// gets everything; one that never plays lets the broadcaster through after 8 s.
    /// True when the relay played in time.
    @discardableResult
    func waitForPlay(_ played: String) async -> Bool {
        let started = ContinuousClock.now
        if await state.withLock({ $0.play(played) }).wait(upTo: Self.playWaitLimit) {
            logger.debug("relay plays the key; publish let through", metadata: ["key": "\(played)", "waited": "\(ContinuousClock.now - started)"])
            return true
        }
        logger.warning("publish let through before its relay played the key: the relay starts at the broadcast's next keyframe",
                       metadata: ["key": "\(played)", "waited": "\(Self.playWaitLimit)"])
        return false
    }

    static let playWaitLimit: Duration = .seconds(8)

    /// nginx-rtmp's `on_play`: notes that a relay (or anyone) plays this key.
    public func playStarted(application: String, key: String) {
        state.withLock { $0.play("\(application)/\(key)") }.fire()
    }

    /// nginx-rtmp's `on_publish_done`: ends the stream of that publish, unless a grace period
    /// keeps it open for the broadcaster's return (its relay then sees its input end by itself).
    public func publishEnded(application: String, key: String) {
        guard config.defaults.relay.inputGraceSeconds <= 0 else {
            // Its relay plays the key again, and says so, before a returning publish is let through.
            state.withLock { $0.playEnded("\(application)/\(key)") }
            return
        }
        let origin = StreamOrigin.rtmpPublish(application: application, key: key)
        let matching = state.withLock { state in state.streams.values.filter { $0.origin == origin } }
        for stream in matching { stream.session.requestStop() }
    }

    /// Arms every configured SRT listener.
    public func startSRTListeners() {
        for index in config.srtListeners.indices { startSRTListener(index) }
    }

    func startSRTListener(_ index: Int) {
        let listener = config.srtListeners[index]
        do {
            try start(input: listener.listen, outputs: listener.upstreams, sticker: listener.sticker, stream: listener.stream,
                      origin: .srtListener(index: index))
        } catch {
            logger.error("SRT listener \(listener.stream) cannot start: \(error.message)")
        }
    }
}

extension StreamRegistry.State {
    mutating func play(_ key: String) -> AsyncSignal {
        if let signal = plays[key] { return signal }
        let signal = AsyncSignal()
        plays[key] = signal
        return signal
    }

    /// The key is no longer played; one still awaited stays, for the play that will fire it.
    mutating func playEnded(_ key: String) {
        if plays[key]?.hasFired == true { plays[key] = nil }
    }
}
