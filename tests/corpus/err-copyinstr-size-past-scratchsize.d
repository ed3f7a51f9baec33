#pragma D option errtags
#pragma D option scratchsize=64
/* copyinstr()'s buffer is scratch memory: a constant size past scratchsize is refused. */
BEGIN
{
	copyinstr(0, 65);
}
