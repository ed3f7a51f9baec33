#pragma D option errtags
/* The translator's own errors are on the line of its closing "};" (dt_xlator_create runs when it is reduced). */
struct in { int i; };
struct out { int o; };
translator struct out < struct in *p >
{
	o = p->i;
	other = p->i;
};
