/* The image a -x process runs of a program or library (proc_image.c). */
#ifndef STAP_PROC_IMAGE_H
#define STAP_PROC_IMAGE_H

#include "session.h"

/* The file to read PATH's code and debug information from: PATH itself,
 * or, when the -x process runs an image of PATH that is no longer the
 * file there (a new build moved over it, or deleted), that image:
 * /proc/PID/exe or /proc/PID/map_files/START-END. Warns where that image
 * cannot be read (PATH is returned: the runtime then leaves the process
 * alone, the images differing). */
const char *proc_image(const struct session *s, const char *path);
/* The path process PID runs its executable from, " (deleted)" taken
 * off (malloc'd), or NULL. */
char *proc_exe_path(long pid);

#endif
