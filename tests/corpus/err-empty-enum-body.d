/* An enum needs an enumerator and a struct a member: an empty body is
   a syntax error at its "}" (dtrace-utils types/err.D_SYNTAX.badenum),
   before a scoped tag is refused (err.D_SYNTAX.badstruct). */
enum foo`bar
{

};
