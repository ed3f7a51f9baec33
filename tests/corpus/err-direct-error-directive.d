#pragma D option errtags
/* #error is one of dt_pragma's directives (dt_pragma_error): its words,
 * each followed by a space. */
#error "stop" here
