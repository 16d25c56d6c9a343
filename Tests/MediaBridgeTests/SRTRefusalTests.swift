import MediaBridge
import Testing

/// libsrt's log lines of refused handshakes (libsrt 1.5, as GStreamer's srt plugin forwards them)
/// and what a listener says of each.
@Suite struct SRTRefusalTests {
    @Test func aWrongPassphraseIsRecognised() {
        #expect(SRTRefusal.reason(inLibsrtMessage: "processConnectRequest: rsp(REJECT): 1010 - Incorrect passphrase", listenerHasPassphrase: true)
            == .wrongPassphrase)
    }

    @Test func unsecureMeansMissingOrUnexpectedDependingOnTheListener() {
        let line = "processConnectRequest: rsp(REJECT): 1011 - Password required or unexpected"
        #expect(SRTRefusal.reason(inLibsrtMessage: line, listenerHasPassphrase: true) == .passphraseMissing)
        #expect(SRTRefusal.reason(inLibsrtMessage: line, listenerHasPassphrase: false) == .passphraseUnexpected)
    }

    @Test func otherRefusalsKeepLibsrtsCodeAndWords() {
        #expect(SRTRefusal.reason(inLibsrtMessage: "processConnectRequest: rsp(REJECT): 1004 - Peer rejected connection", listenerHasPassphrase: false)
            == .other(code: 1004, text: "Peer rejected connection"))
    }

    @Test func otherLinesAreNotRefusals() {
        #expect(SRTRefusal.reason(inLibsrtMessage: "KMREQ/rcv: (snd) Rx process failure - BADSECRET", listenerHasPassphrase: true) == nil)
        #expect(SRTRefusal.reason(inLibsrtMessage: "rsp(REJECT): garbled", listenerHasPassphrase: true) == nil)
    }

    @Test func theMessageSaysWhoWhatAndWhatToDo() {
        let refusal = SRTRefusal(caller: "203.0.113.7:40000", reason: .wrongPassphrase)
        #expect(refusal.description == "SRT caller 203.0.113.7:40000 refused: wrong passphrase (it does not match this listener's); give the broadcaster the listener's passphrase")
    }
}
