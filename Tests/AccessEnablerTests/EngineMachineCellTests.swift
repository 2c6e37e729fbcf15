import XCTest

/// One test per cell of the table in `Sources/AccessEnabler/README.md`: a named state (reached by events from a
/// fresh machine), one event, the actions returned and the state after. No engine, no network, no sleeps. The cells
/// marked "cannot happen" there are preconditions and are not run.
final class EngineMachineCellTests: XCTestCase {
    // MARK: unset: unset

    func testUnset_setRequestorStarted() {
        XCTAssertEqual(cell(.unset, .setRequestorStarted), "- → configuring(1)")
    }

    func testUnset_waitingCall() {
        XCTAssertEqual(cell(.unset, .waitingCall), "run call → unset")
    }

    func testUnset_loginRequested() {
        XCTAssertEqual(cell(.unset, .loginRequested), "displayProviderDialog → unset login#1[R] dialog [\"w\"]")
    }

    func testUnset_providerDialogShown() {
        XCTAssertEqual(cell(.unset, .providerDialogShown), "- → unset")
    }

    func testUnset_providerPicked() {
        XCTAssertEqual(cell(.unset, .providerPicked), "stopPolling → unset")
    }

    func testUnset_sessionOpened() {
        XCTAssertEqual(cell(.unset, .sessionOpened), "- → unset")
    }

    func testUnset_redirected() {
        XCTAssertEqual(cell(.unset, .redirected), "reportStoredState nil → unset")
    }

    func testUnset_joined() {
        XCTAssertEqual(cell(.unset, .joined), "resume w 0 Provider not Selected Error → unset")
    }

    func testUnset_loginEnded() {
        XCTAssertEqual(cell(.unset, .loginEnded), "- → unset last 1")
    }

    func testUnset_logoutStarted() {
        XCTAssertEqual(cell(.unset, .logoutStarted), "startLogoutTimer #1 → unset logout#1 [\"w\"]")
    }

    func testUnset_logoutEnded() {
        XCTAssertEqual(cell(.unset, .logoutEnded), "- → unset")
    }

    func testUnset_cancel() {
        XCTAssertEqual(cell(.unset, .cancel), "- → unset closed")
    }

    // MARK: configuring: configuring(1)

    func testConfiguring_setRequestorStarted() {
        XCTAssertEqual(cell(.configuring, .setRequestorStarted), "- → configuring(2)")
    }

    func testConfiguring_setRequestorEnded() {
        XCTAssertEqual(cell(.configuring, .setRequestorEnded), "- → ready(R2)")
    }

    func testConfiguring_setRequestorFailed() {
        XCTAssertEqual(cell(.configuring, .setRequestorFailed), "- → failed")
    }

    func testConfiguring_waitingCall() {
        XCTAssertEqual(cell(.configuring, .waitingCall), "- → configuring(1) held [\"call\"]")
    }

    func testConfiguring_loginRequested() {
        XCTAssertEqual(cell(.configuring, .loginRequested), "displayProviderDialog → configuring(1) login#1[R] dialog [\"w\"]")
    }

    func testConfiguring_providerDialogShown() {
        XCTAssertEqual(cell(.configuring, .providerDialogShown), "- → configuring(1)")
    }

    func testConfiguring_providerPicked() {
        XCTAssertEqual(cell(.configuring, .providerPicked), "stopPolling → configuring(1)")
    }

    func testConfiguring_sessionOpened() {
        XCTAssertEqual(cell(.configuring, .sessionOpened), "- → configuring(1)")
    }

    func testConfiguring_redirected() {
        XCTAssertEqual(cell(.configuring, .redirected), "reportStoredState nil → configuring(1)")
    }

    func testConfiguring_joined() {
        XCTAssertEqual(cell(.configuring, .joined), "resume w 0 Provider not Selected Error → configuring(1)")
    }

    func testConfiguring_loginEnded() {
        XCTAssertEqual(cell(.configuring, .loginEnded), "- → configuring(1) last 1")
    }

    func testConfiguring_logoutStarted() {
        XCTAssertEqual(cell(.configuring, .logoutStarted), "startLogoutTimer #1 → configuring(1) logout#1 [\"w\"]")
    }

    func testConfiguring_logoutEnded() {
        XCTAssertEqual(cell(.configuring, .logoutEnded), "- → configuring(1)")
    }

    func testConfiguring_cancel() {
        XCTAssertEqual(cell(.configuring, .cancel), "- → configuring(1) closed")
    }

    // MARK: reconfiguring: reconfiguring(1, R)

    func testReconfiguring_setRequestorStarted() {
        XCTAssertEqual(cell(.reconfiguring, .setRequestorStarted), "- → reconfiguring(2, R)")
    }

    func testReconfiguring_setRequestorEnded() {
        XCTAssertEqual(cell(.reconfiguring, .setRequestorEnded), "- → ready(R2)")
    }

    func testReconfiguring_setRequestorFailed() {
        XCTAssertEqual(cell(.reconfiguring, .setRequestorFailed), "- → failed")
    }

    func testReconfiguring_waitingCall() {
        XCTAssertEqual(cell(.reconfiguring, .waitingCall), "- → reconfiguring(1, R) held [\"call\"]")
    }

    func testReconfiguring_loginRequested() {
        XCTAssertEqual(cell(.reconfiguring, .loginRequested), "displayProviderDialog → reconfiguring(1, R) login#1[R] dialog [\"w\"]")
    }

    func testReconfiguring_providerDialogShown() {
        XCTAssertEqual(cell(.reconfiguring, .providerDialogShown), "- → reconfiguring(1, R)")
    }

    func testReconfiguring_providerPicked() {
        XCTAssertEqual(cell(.reconfiguring, .providerPicked), "stopPolling → reconfiguring(1, R)")
    }

    func testReconfiguring_sessionOpened() {
        XCTAssertEqual(cell(.reconfiguring, .sessionOpened), "- → reconfiguring(1, R)")
    }

    func testReconfiguring_redirected() {
        XCTAssertEqual(cell(.reconfiguring, .redirected), "reportStoredState R → reconfiguring(1, R)")
    }

    func testReconfiguring_joined() {
        XCTAssertEqual(cell(.reconfiguring, .joined), "resume w 0 Provider not Selected Error → reconfiguring(1, R)")
    }

    func testReconfiguring_loginEnded() {
        XCTAssertEqual(cell(.reconfiguring, .loginEnded), "- → reconfiguring(1, R) last 1")
    }

    func testReconfiguring_logoutStarted() {
        XCTAssertEqual(cell(.reconfiguring, .logoutStarted), "startLogoutTimer #1 → reconfiguring(1, R) logout#1 [\"w\"]")
    }

    func testReconfiguring_logoutEnded() {
        XCTAssertEqual(cell(.reconfiguring, .logoutEnded), "- → reconfiguring(1, R)")
    }

    func testReconfiguring_cancel() {
        XCTAssertEqual(cell(.reconfiguring, .cancel), "- → reconfiguring(1, R) closed")
    }

    // MARK: ready: ready(R)

    func testReady_setRequestorStarted() {
        XCTAssertEqual(cell(.ready, .setRequestorStarted), "- → reconfiguring(1, R)")
    }

    func testReady_waitingCall() {
        XCTAssertEqual(cell(.ready, .waitingCall), "run call → ready(R)")
    }

    func testReady_loginRequested() {
        XCTAssertEqual(cell(.ready, .loginRequested), "displayProviderDialog → ready(R) login#1[R] dialog [\"w\"]")
    }

    func testReady_providerDialogShown() {
        XCTAssertEqual(cell(.ready, .providerDialogShown), "- → ready(R)")
    }

    func testReady_providerPicked() {
        XCTAssertEqual(cell(.ready, .providerPicked), "stopPolling → ready(R)")
    }

    func testReady_sessionOpened() {
        XCTAssertEqual(cell(.ready, .sessionOpened), "- → ready(R)")
    }

    func testReady_redirected() {
        XCTAssertEqual(cell(.ready, .redirected), "reportStoredState R → ready(R)")
    }

    func testReady_joined() {
        XCTAssertEqual(cell(.ready, .joined), "resume w 0 Provider not Selected Error → ready(R)")
    }

    func testReady_loginEnded() {
        XCTAssertEqual(cell(.ready, .loginEnded), "- → ready(R) last 1")
    }

    func testReady_logoutStarted() {
        XCTAssertEqual(cell(.ready, .logoutStarted), "startLogoutTimer #1 → ready(R) logout#1 [\"w\"]")
    }

    func testReady_logoutEnded() {
        XCTAssertEqual(cell(.ready, .logoutEnded), "- → ready(R)")
    }

    func testReady_cancel() {
        XCTAssertEqual(cell(.ready, .cancel), "- → ready(R) closed")
    }

    // MARK: failed: failed

    func testFailed_setRequestorStarted() {
        XCTAssertEqual(cell(.failed, .setRequestorStarted), "- → configuring(1)")
    }

    func testFailed_waitingCall() {
        XCTAssertEqual(cell(.failed, .waitingCall), "run call → failed")
    }

    func testFailed_loginRequested() {
        XCTAssertEqual(cell(.failed, .loginRequested), "displayProviderDialog → failed login#1[R] dialog [\"w\"]")
    }

    func testFailed_providerDialogShown() {
        XCTAssertEqual(cell(.failed, .providerDialogShown), "- → failed")
    }

    func testFailed_providerPicked() {
        XCTAssertEqual(cell(.failed, .providerPicked), "stopPolling → failed")
    }

    func testFailed_sessionOpened() {
        XCTAssertEqual(cell(.failed, .sessionOpened), "- → failed")
    }

    func testFailed_redirected() {
        XCTAssertEqual(cell(.failed, .redirected), "reportStoredState nil → failed")
    }

    func testFailed_joined() {
        XCTAssertEqual(cell(.failed, .joined), "resume w 0 Provider not Selected Error → failed")
    }

    func testFailed_loginEnded() {
        XCTAssertEqual(cell(.failed, .loginEnded), "- → failed last 1")
    }

    func testFailed_logoutStarted() {
        XCTAssertEqual(cell(.failed, .logoutStarted), "startLogoutTimer #1 → failed logout#1 [\"w\"]")
    }

    func testFailed_logoutEnded() {
        XCTAssertEqual(cell(.failed, .logoutEnded), "- → failed")
    }

    func testFailed_cancel() {
        XCTAssertEqual(cell(.failed, .cancel), "- → failed closed")
    }

    // MARK: login at the partner picker: ready(R) login#1[R] partnerPicker ["get"]

    func testLoginAtThePartnerPicker_setRequestorStarted() {
        XCTAssertEqual(cell(.partnerPicker, .setRequestorStarted), "- → reconfiguring(1, R) login#1[R] partnerPicker [\"get\"]")
    }

    func testLoginAtThePartnerPicker_waitingCall() {
        XCTAssertEqual(cell(.partnerPicker, .waitingCall), "run call → ready(R) login#1[R] partnerPicker [\"get\"]")
    }

    func testLoginAtThePartnerPicker_loginRequested() {
        XCTAssertEqual(cell(.partnerPicker, .loginRequested), "- → ready(R) login#1[R] partnerPicker [\"get\", \"w\"]")
    }

    func testLoginAtThePartnerPicker_providerDialogShown() {
        XCTAssertEqual(cell(.partnerPicker, .providerDialogShown), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtThePartnerPicker_providerPicked() {
        XCTAssertEqual(cell(.partnerPicker, .providerPicked), "stopPolling; createSession #1 → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtThePartnerPicker_sessionOpened() {
        XCTAssertEqual(cell(.partnerPicker, .sessionOpened), "- → ready(R) login#1[R] page(C2,M2) [\"get\"]")
    }

    func testLoginAtThePartnerPicker_redirected() {
        XCTAssertEqual(cell(.partnerPicker, .redirected), "answerStoredState R → ready(R) login#1[R] partnerPicker [\"get\"]")
    }

    func testLoginAtThePartnerPicker_joined() {
        XCTAssertEqual(cell(.partnerPicker, .joined), "- → ready(R) login#1[R] partnerPicker [\"get\", \"w\"]")
    }

    func testLoginAtThePartnerPicker_loginEnded() {
        XCTAssertEqual(cell(.partnerPicker, .loginEnded), "stopPolling; resume get 1 → ready(R) last 1")
    }

    func testLoginAtThePartnerPicker_logoutStarted() {
        XCTAssertEqual(
            cell(.partnerPicker, .logoutStarted), "startLogoutTimer #2 → ready(R) login#1[R] partnerPicker [\"get\"] logout#2 [\"w\"]")
    }

    func testLoginAtThePartnerPicker_logoutEnded() {
        XCTAssertEqual(cell(.partnerPicker, .logoutEnded), "- → ready(R) login#1[R] partnerPicker [\"get\"]")
    }

    func testLoginAtThePartnerPicker_cancel() {
        XCTAssertEqual(cell(.partnerPicker, .cancel), "cancelLogin R → ready(R) login#1[R] partnerPicker [\"get\"] closed")
    }

    // MARK: login at the provider dialog: ready(R) login#1[R] dialog ["get"]

    func testLoginAtTheProviderDialog_setRequestorStarted() {
        XCTAssertEqual(cell(.dialog, .setRequestorStarted), "- → reconfiguring(1, R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_waitingCall() {
        XCTAssertEqual(cell(.dialog, .waitingCall), "run call → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_loginRequested() {
        XCTAssertEqual(cell(.dialog, .loginRequested), "- → ready(R) login#1[R] dialog [\"get\", \"w\"]")
    }

    func testLoginAtTheProviderDialog_providerDialogShown() {
        XCTAssertEqual(cell(.dialog, .providerDialogShown), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_providerPicked() {
        XCTAssertEqual(cell(.dialog, .providerPicked), "stopPolling; createSession #1 → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_sessionOpened() {
        XCTAssertEqual(cell(.dialog, .sessionOpened), "- → ready(R) login#1[R] page(C2,M2) [\"get\"]")
    }

    func testLoginAtTheProviderDialog_redirected() {
        XCTAssertEqual(cell(.dialog, .redirected), "answerStoredState R → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_joined() {
        XCTAssertEqual(cell(.dialog, .joined), "- → ready(R) login#1[R] dialog [\"get\", \"w\"]")
    }

    func testLoginAtTheProviderDialog_loginEnded() {
        XCTAssertEqual(cell(.dialog, .loginEnded), "stopPolling; resume get 1 → ready(R) last 1")
    }

    func testLoginAtTheProviderDialog_logoutStarted() {
        XCTAssertEqual(cell(.dialog, .logoutStarted), "startLogoutTimer #2 → ready(R) login#1[R] dialog [\"get\"] logout#2 [\"w\"]")
    }

    func testLoginAtTheProviderDialog_logoutEnded() {
        XCTAssertEqual(cell(.dialog, .logoutEnded), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheProviderDialog_cancel() {
        XCTAssertEqual(cell(.dialog, .cancel), "cancelLogin R → ready(R) login#1[R] dialog [\"get\"] closed")
    }

    // MARK: login at the login page: ready(R) login#1[R] page(C,M) ["get"]

    func testLoginAtTheLoginPage_setRequestorStarted() {
        XCTAssertEqual(cell(.page, .setRequestorStarted), "- → reconfiguring(1, R) login#1[R] page(C,M) [\"get\"]")
    }

    func testLoginAtTheLoginPage_waitingCall() {
        XCTAssertEqual(cell(.page, .waitingCall), "run call → ready(R) login#1[R] page(C,M) [\"get\"]")
    }

    func testLoginAtTheLoginPage_loginRequested() {
        XCTAssertEqual(cell(.page, .loginRequested), "- → ready(R) login#1[R] page(C,M) [\"get\", \"w\"]")
    }

    func testLoginAtTheLoginPage_providerDialogShown() {
        XCTAssertEqual(cell(.page, .providerDialogShown), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheLoginPage_providerPicked() {
        XCTAssertEqual(cell(.page, .providerPicked), "stopPolling; createSession #1 → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheLoginPage_sessionOpened() {
        XCTAssertEqual(cell(.page, .sessionOpened), "- → ready(R) login#1[R] page(C2,M2) [\"get\"]")
    }

    func testLoginAtTheLoginPage_redirected() {
        XCTAssertEqual(cell(.page, .redirected), "completeLogin #1 C M R → ready(R) login#1[R] completing [\"get\"]")
    }

    func testLoginAtTheLoginPage_joined() {
        XCTAssertEqual(cell(.page, .joined), "- → ready(R) login#1[R] page(C,M) [\"get\", \"w\"]")
    }

    func testLoginAtTheLoginPage_loginEnded() {
        XCTAssertEqual(cell(.page, .loginEnded), "stopPolling; resume get 1 → ready(R) last 1")
    }

    func testLoginAtTheLoginPage_logoutStarted() {
        XCTAssertEqual(cell(.page, .logoutStarted), "startLogoutTimer #2 → ready(R) login#1[R] page(C,M) [\"get\"] logout#2 [\"w\"]")
    }

    func testLoginAtTheLoginPage_logoutEnded() {
        XCTAssertEqual(cell(.page, .logoutEnded), "- → ready(R) login#1[R] page(C,M) [\"get\"]")
    }

    func testLoginAtTheLoginPage_cancel() {
        XCTAssertEqual(cell(.page, .cancel), "cancelLogin R → ready(R) login#1[R] page(C,M) [\"get\"] closed")
    }

    // MARK: login completing: ready(R) login#1[R] completing ["get"]

    func testLoginCompleting_setRequestorStarted() {
        XCTAssertEqual(cell(.completing, .setRequestorStarted), "- → reconfiguring(1, R) login#1[R] completing [\"get\"]")
    }

    func testLoginCompleting_waitingCall() {
        XCTAssertEqual(cell(.completing, .waitingCall), "run call → ready(R) login#1[R] completing [\"get\"]")
    }

    func testLoginCompleting_loginRequested() {
        XCTAssertEqual(cell(.completing, .loginRequested), "- → ready(R) login#1[R] completing [\"get\", \"w\"]")
    }

    func testLoginCompleting_providerDialogShown() {
        XCTAssertEqual(cell(.completing, .providerDialogShown), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginCompleting_providerPicked() {
        XCTAssertEqual(cell(.completing, .providerPicked), "stopPolling; createSession #1 → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginCompleting_sessionOpened() {
        XCTAssertEqual(cell(.completing, .sessionOpened), "- → ready(R) login#1[R] page(C2,M2) [\"get\"]")
    }

    func testLoginCompleting_redirected() {
        XCTAssertEqual(cell(.completing, .redirected), "join → ready(R) login#1[R] completing [\"get\"]")
    }

    func testLoginCompleting_joined() {
        XCTAssertEqual(cell(.completing, .joined), "- → ready(R) login#1[R] completing [\"get\", \"w\"]")
    }

    func testLoginCompleting_loginEnded() {
        XCTAssertEqual(cell(.completing, .loginEnded), "stopPolling; resume get 1 → ready(R) last 1")
    }

    func testLoginCompleting_logoutStarted() {
        XCTAssertEqual(cell(.completing, .logoutStarted), "startLogoutTimer #2 → ready(R) login#1[R] completing [\"get\"] logout#2 [\"w\"]")
    }

    func testLoginCompleting_logoutEnded() {
        XCTAssertEqual(cell(.completing, .logoutEnded), "- → ready(R) login#1[R] completing [\"get\"]")
    }

    func testLoginCompleting_cancel() {
        XCTAssertEqual(cell(.completing, .cancel), "- → ready(R) login#1[R] completing [\"get\"] closed")
    }

    // MARK: login at the second screen: ready(R) login#1[R] secondScreen(C,M) ["get"]

    func testLoginAtTheSecondScreen_setRequestorStarted() {
        XCTAssertEqual(cell(.secondScreen, .setRequestorStarted), "- → reconfiguring(1, R) login#1[R] secondScreen(C,M) [\"get\"]")
    }

    func testLoginAtTheSecondScreen_waitingCall() {
        XCTAssertEqual(cell(.secondScreen, .waitingCall), "run call → ready(R) login#1[R] secondScreen(C,M) [\"get\"]")
    }

    func testLoginAtTheSecondScreen_loginRequested() {
        XCTAssertEqual(cell(.secondScreen, .loginRequested), "- → ready(R) login#1[R] secondScreen(C,M) [\"get\", \"w\"]")
    }

    func testLoginAtTheSecondScreen_providerDialogShown() {
        XCTAssertEqual(cell(.secondScreen, .providerDialogShown), "- → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheSecondScreen_providerPicked() {
        XCTAssertEqual(cell(.secondScreen, .providerPicked), "stopPolling; createSession #1 → ready(R) login#1[R] dialog [\"get\"]")
    }

    func testLoginAtTheSecondScreen_sessionOpened() {
        XCTAssertEqual(cell(.secondScreen, .sessionOpened), "- → ready(R) login#1[R] page(C2,M2) [\"get\"]")
    }

    func testLoginAtTheSecondScreen_redirected() {
        XCTAssertEqual(cell(.secondScreen, .redirected), "answerStoredState R → ready(R) login#1[R] secondScreen(C,M) [\"get\"]")
    }

    func testLoginAtTheSecondScreen_joined() {
        XCTAssertEqual(cell(.secondScreen, .joined), "- → ready(R) login#1[R] secondScreen(C,M) [\"get\", \"w\"]")
    }

    func testLoginAtTheSecondScreen_loginEnded() {
        XCTAssertEqual(cell(.secondScreen, .loginEnded), "stopPolling; resume get 1 → ready(R) last 1")
    }

    func testLoginAtTheSecondScreen_logoutStarted() {
        XCTAssertEqual(
            cell(.secondScreen, .logoutStarted), "startLogoutTimer #2 → ready(R) login#1[R] secondScreen(C,M) [\"get\"] logout#2 [\"w\"]")
    }

    func testLoginAtTheSecondScreen_logoutEnded() {
        XCTAssertEqual(cell(.secondScreen, .logoutEnded), "- → ready(R) login#1[R] secondScreen(C,M) [\"get\"]")
    }

    func testLoginAtTheSecondScreen_cancel() {
        XCTAssertEqual(cell(.secondScreen, .cancel), "cancelLogin R → ready(R) login#1[R] secondScreen(C,M) [\"get\"] closed")
    }

    // MARK: logout pending: ready(R) logout#1 ["logout"]

    func testLogoutPending_setRequestorStarted() {
        XCTAssertEqual(cell(.logoutPending, .setRequestorStarted), "- → reconfiguring(1, R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_waitingCall() {
        XCTAssertEqual(cell(.logoutPending, .waitingCall), "run call → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_loginRequested() {
        XCTAssertEqual(
            cell(.logoutPending, .loginRequested), "displayProviderDialog → ready(R) login#2[R] dialog [\"w\"] logout#1 [\"logout\"]")
    }

    func testLogoutPending_providerDialogShown() {
        XCTAssertEqual(cell(.logoutPending, .providerDialogShown), "- → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_providerPicked() {
        XCTAssertEqual(cell(.logoutPending, .providerPicked), "stopPolling → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_sessionOpened() {
        XCTAssertEqual(cell(.logoutPending, .sessionOpened), "- → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_redirected() {
        XCTAssertEqual(cell(.logoutPending, .redirected), "endLogout → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_joined() {
        XCTAssertEqual(cell(.logoutPending, .joined), "resume w 0 Provider not Selected Error → ready(R) logout#1 [\"logout\"]")
    }

    func testLogoutPending_loginEnded() {
        XCTAssertEqual(cell(.logoutPending, .loginEnded), "- → ready(R) logout#1 [\"logout\"] last 1")
    }

    func testLogoutPending_logoutEnded() {
        XCTAssertEqual(
            cell(.logoutPending, .logoutEnded),
            "stopLogoutTimer; reportLogout partner:true; resume logout 0 User Not Authenticated Error → ready(R) last 0 User Not Authenticated Error"
        )
    }

    func testLogoutPending_cancel() {
        XCTAssertEqual(cell(.logoutPending, .cancel), "endLogout → ready(R) logout#1 [\"logout\"] closed")
    }

    // MARK: closed: ready(R) closed

    func testClosed_setRequestorStarted() {
        XCTAssertEqual(cell(.closed, .setRequestorStarted), "- → reconfiguring(1, R) closed")
    }

    func testClosed_waitingCall() {
        XCTAssertEqual(cell(.closed, .waitingCall), "run call → ready(R) closed")
    }

    func testClosed_loginRequested() {
        XCTAssertEqual(cell(.closed, .loginRequested), "refuseLogin w R cancelled:true → ready(R) closed")
    }

    func testClosed_providerDialogShown() {
        XCTAssertEqual(cell(.closed, .providerDialogShown), "- → ready(R) closed")
    }

    func testClosed_providerPicked() {
        XCTAssertEqual(cell(.closed, .providerPicked), "stopPolling → ready(R) closed")
    }

    func testClosed_sessionOpened() {
        XCTAssertEqual(cell(.closed, .sessionOpened), "- → ready(R) closed")
    }

    func testClosed_redirected() {
        XCTAssertEqual(cell(.closed, .redirected), "reportStoredState R → ready(R) closed")
    }

    func testClosed_joined() {
        XCTAssertEqual(cell(.closed, .joined), "resume w 0 Provider not Selected Error → ready(R) closed")
    }

    func testClosed_loginEnded() {
        XCTAssertEqual(cell(.closed, .loginEnded), "- → ready(R) closed last 1")
    }

    func testClosed_logoutStarted() {
        XCTAssertEqual(cell(.closed, .logoutStarted), "startLogoutTimer #1 → ready(R) logout#1 [\"w\"] closed")
    }

    func testClosed_logoutEnded() {
        XCTAssertEqual(cell(.closed, .logoutEnded), "- → ready(R) closed")
    }

    func testClosed_cancel() {
        XCTAssertEqual(cell(.closed, .cancel), "- → ready(R) closed")
    }
}
