#pragma D option errtags
struct in { int i; };
translator int < struct in *p >
{
};
